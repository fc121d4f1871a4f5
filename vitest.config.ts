import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'contract-tests/**/*.test.ts'],
    // Suites that start Prism need more than the default 5 s on a two-core machine.
    // The contract suites share one mock, started through the `npm start` launcher.
    globalSetup: ['contract-tests/setup/global.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Type tests: `@ts-expect-error` lines must fail to compile, the rest must compile.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
