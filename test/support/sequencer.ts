// The order Vitest hands test files to its workers. Vitest runs the longest files first once
// its results cache knows their durations, but a fresh clone (CI, a new machine) has no cache and
// gets the files in glob order, which can leave a slow suite to start last and the run 10 to 15 s
// longer. The suites below, slowest first (measured in a whole run), always lead.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest suites on a two-core machine, by measured duration. */
const SLOWEST_FIRST = [
  'contract-tests/webhooks.test.ts',
  'contract-tests/server-profiles.test.ts',
  'contract-tests/sandbox-state.test.ts',
  'contract-tests/live.test.ts',
  'contract-tests/proxy-cli.test.ts',
  'test/client/transport.test.ts',
  'contract-tests/mock-cli.test.ts',
  'contract-tests/conditions.test.ts',
  'contract-tests/sandbox-model.test.ts',
  'contract-tests/sandbox-deliveries.test.ts',
  'contract-tests/webhook-receiver.test.ts',
  'test/client/redaction.property.test.ts',
];

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification): number => {
      const index = SLOWEST_FIRST.findIndex((suffix) => file.moduleId.endsWith(suffix));
      return index < 0 ? SLOWEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the rest keeps Vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
