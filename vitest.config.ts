import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/support/sequencer.js';

/**
 * The installed packages, a fresh clone, everything that runs Node 22 or 24, Deno, Bun or Chromium
 * (which only the tools of test/dist-tools/ bring), the sandbox's processes on PostgreSQL and the
 * release checks below: `npm run test:dist` (vitest.dist.config.ts).
 */
export const DIST_SUITES = [
  'test/package/pack.test.ts',
  'test/package/clone.test.ts',
  'test/runtimes/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'contract-tests/sandbox-postgres-team.test.ts',
  'contract-tests/sandbox-postgres.test.ts',
  'contract-tests/postgres-command.test.ts',
  // Release checks that bundle or run what ships: the server profiles through Redocly, the
  // examples as a reader runs them, the browser build's weight, and the breaking-change gate.
  'test/profiles.test.ts',
  'test/package/example-scripts.test.ts',
  'contract-tests/msw-browser.test.ts',
  'test/check-breaking.test.ts',
  // The hostile peers, long loads by design: a minute of the suites' time together.
  'contract-tests/sandbox-hostile.test.ts',
  'contract-tests/peer-hostile.test.ts',
  'contract-tests/mock-hostile.test.ts',
  // Megabyte payloads until the deliveries pass their share of a 512 MiB heap.
  'contract-tests/webhooks-heap.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'contract-tests/**/*.test.ts', 'examples/**/*.test.mjs'],
    exclude: [...configDefaults.exclude, ...DIST_SUITES],
    // The contract suites share one mock, started through the `npm start` launcher.
    globalSetup: ['contract-tests/setup/global.ts'],
    // The suites wait on child processes, local servers, time-outs and the browser as much as
    // they compute: on two cores three workers keep both busy, where Vitest's default (cores - 1)
    // runs the files one by one.
    maxWorkers: Math.max(3, availableParallelism() + 1),
    // Files share a worker's module cache instead of re-importing Prism, Ajv and the document for
    // each of them. No suite mocks modules or globals; each starts and stops its own servers.
    isolate: false,
    // On a fresh clone Vitest has no durations to order by: the slowest suites start first anyway.
    sequence: { sequencer: SlowestFirstSequencer },
    // Suites that start Prism need more than the default 5 s on a two-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Type tests (test/**/*.test-d.ts: `@ts-expect-error` lines must fail to compile, the rest must
    // compile) are checked once, by `npm run typecheck` in npm test: Vitest's typecheck mode would
    // run the same tsc over them a second time.
  },
});
