import { configDefaults, defineConfig } from 'vitest/config';
import shared from './vitest.config.js';

// `npm run test:dist`: what users install, checked as they get it: both packages packed and
// installed into fresh projects from the registry, and the built client and mock under Node 22
// and 24, Deno, Bun and Chromium. Installs and other runtimes take most of a minute, so these two
// suites run apart from `npm test`; CI (.ci/run and the workflow) runs both commands.
export default defineConfig({
  ...shared,
  test: { ...shared.test, include: ['test/package/pack.test.ts', 'test/runtimes/runtimes.test.ts'], exclude: configDefaults.exclude },
});
