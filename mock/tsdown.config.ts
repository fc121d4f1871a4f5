import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { defineConfig } from 'tsdown';
import { documentTwin } from './src/contract/document-twin.js';

// The `gitea-mock` command (serving, and live mode as `gitea-mock verify`) and its server for
// programmatic use, the MSW handlers (`gitea-mock/msw`, with msw itself left to the user as a
// peer), ESM for Node 20, with type declarations for the two libraries; the sandbox's markdown renderer is an entry of its own, as
// worker threads load it by file name. The dependencies (gitea-contract, Prism, Ajv, yaml,
// markdown-it, tinypool) stay imports; the few client internals the mock shares (redaction, the
// Authorization header) are bundled.
export default defineConfig({
  entry: { cli: 'src/cli.ts', server: 'src/front/server.ts', msw: 'src/msw/handlers.ts', 'markdown-worker': 'src/sources/markdown-worker.ts' },
  outDir: 'dist',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  dts: true,
  clean: false,
  // Serving, live mode, the proxy (with Ajv for its answer check) and the sandbox's store are
  // chunks loaded only when used, under names that do not change from build to build.
  outputOptions: { chunkFileNames: '[name].mjs' },
  plugins: [
    {
      // The shipped document parsed, with its operation table, for a start that reads JSON
      // instead of computing both (src/contract/document-file.ts).
      name: 'document-twin',
      generateBundle() {
        const text = readFileSync(createRequire(import.meta.url).resolve('gitea-contract/openapi.yaml'), 'utf8');
        this.emitFile({ type: 'asset', fileName: 'document.json', source: documentTwin(text) });
      },
    },
  ],
});
