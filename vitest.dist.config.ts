import { configDefaults, defineConfig } from 'vitest/config';
import shared, { DIST_SUITES } from './vitest.config.js';

// `npm run test:dist`: what users get, checked as they get it: both packages packed and installed
// into fresh projects from the registry, the built client and mock under Node 22 and 24, Deno,
// Bun and Chromium, the client and the MSW handlers' browser build in Chromium, the HTML reference
// (`npm run docs`) in Chromium, and processes of the built sandbox sharing a PostgreSQL server.
// Installs, other runtimes, the browser and a dozen process starts take minutes, and their tools
// (test/dist-tools/) most of the development install, so these suites run apart from `npm test`,
// after a setup that installs the tools; CI (.ci/run and the workflow) runs both commands.
export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: DIST_SUITES,
    exclude: configDefaults.exclude,
    globalSetup: [...[shared.test?.globalSetup ?? []].flat(), 'test/dist-tools/setup.ts'],
  },
});
