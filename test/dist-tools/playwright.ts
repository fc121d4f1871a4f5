// playwright-core for the browser suites, one of the tools of `npm run test:dist`: imported from
// this folder, it resolves from the node_modules that scripts/dist-tools.mjs installs beside it.
export type { Browser, BrowserContext, Page } from 'playwright-core';
export { chromium } from 'playwright-core';
