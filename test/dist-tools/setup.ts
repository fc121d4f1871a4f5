// Vitest's global setup for `npm run test:dist`: the tools its suites run, installed before any starts.
export { installDistTools as default } from '../../scripts/dist-tools.mjs';
