import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'contract-tests/**/*.test.ts', 'examples/**/*.test.mjs'],
    // The contract suites share one mock, started through the `npm start` launcher.
    globalSetup: ['contract-tests/setup/global.ts'],
    // The suites mostly wait on child processes, local servers and the browser, so on two cores
    // two workers halve the wall time where Vitest's default (cores - 1) runs them one by one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Files share a worker's module cache instead of re-importing Prism, Ajv and the document for
    // each of them: a fifth of the run's CPU on two cores. No suite mocks modules or globals; each
    // starts and stops its own servers.
    isolate: false,
    // On a fresh clone Vitest has no durations to order by: the slowest suites start first anyway.
    sequence: { sequencer: SlowestFirstSequencer },
    // Suites that start Prism need more than the default 5 s on a two-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Type tests (test/**/*.test-d.ts: `@ts-expect-error` lines must fail to compile, the rest must
    // compile) are checked once, by `npm run typecheck` in pretest: Vitest's typecheck mode would
    // run the same tsc over them a second time.
  },
});
