import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'contract-tests/**/*.test.ts'],
    // Suites that start Prism need more than the default 5 s on a two-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
