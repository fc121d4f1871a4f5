import { defineConfig } from 'tsdown';

// The `gitea-mock` command (serving, and live mode as `gitea-mock verify`) and its server for
// programmatic use, ESM for Node 20. The dependencies (gitea-contract, Prism, Ajv, yaml, markdown-it) stay imports;
// the few client internals the mock shares (redaction, the Authorization header) are bundled.
export default defineConfig({
  entry: { cli: 'src/cli.ts', server: 'src/front/server.ts' },
  outDir: 'dist',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  dts: false,
  clean: false,
  // Serving, live mode, the proxy (with Ajv for its answer check) and the sandbox's store are
  // chunks loaded only when used, under names that do not change from build to build.
  outputOptions: { chunkFileNames: '[name].mjs' },
});
