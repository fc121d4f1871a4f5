// The order Vitest hands test files to its two workers. Vitest runs the longest files first once
// its results cache knows their durations, but a fresh clone (CI, a new machine) has no cache and
// gets the files in glob order, which left the package test (half a minute of waiting on npm)
// to start last and the run 10 to 15 s longer. The suites below, slowest first, always lead.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest suites on a two-core machine, by measured duration. */
const SLOWEST_FIRST = [
  'test/package/pack.test.ts',
  'contract-tests/live.test.ts',
  'contract-tests/sandbox-hostile.test.ts',
  'contract-tests/sandbox-model.test.ts',
  'contract-tests/mock-hostile.test.ts',
  'contract-tests/dynamic.test.ts',
  'contract-tests/properties.test.ts',
  'contract-tests/proxy-cli.test.ts',
  'contract-tests/mock-cli.test.ts',
  'contract-tests/static-mock.test.ts',
  'contract-tests/sandbox-state.test.ts',
  'test/check-breaking.test.ts',
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
