import { configDefaults, defineConfig } from 'vitest/config';
import shared, { DIST_SUITES } from './vitest.config.js';

// `npm run test:dist`: what users get, checked as they get it: both packages packed and installed
// into fresh projects from the registry, the built client and mock under Node 22 and 24, Deno,
// Bun and Chromium, and the HTML reference (`npm run docs`) in Chromium. Installs, other runtimes
// and the reference's build take most of a minute, so these suites run apart from `npm test`; CI
// (.ci/run and the workflow) runs both commands.
export default defineConfig({
  ...shared,
  test: { ...shared.test, include: DIST_SUITES, exclude: configDefaults.exclude },
});
