import { configDefaults, defineConfig } from 'vitest/config';
import shared, { DIST_SUITES } from './vitest.config.js';

// `npm run test:dist`: what users get, checked as they get it: both packages packed and installed
// into fresh projects from the registry, the built client and mock under Node 22 and 24, Deno,
// Bun and Chromium, the HTML reference (`npm run docs`) in Chromium, and processes of the built
// sandbox sharing a PostgreSQL server. Installs, other runtimes, the reference's build and a dozen
// process starts take most of a minute, so these suites run apart from `npm test`; CI (.ci/run and
// the workflow) runs both commands.
export default defineConfig({
  ...shared,
  test: { ...shared.test, include: DIST_SUITES, exclude: configDefaults.exclude },
});
