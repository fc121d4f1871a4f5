import { defineConfig, type UserConfig } from 'tsdown';

/** The Node tools: ESM for Node 20, no declarations. */
const nodeTool = { outDir: 'dist', format: 'esm', platform: 'node', target: 'node20', dts: false, clean: false } satisfies UserConfig;

export default defineConfig([
  {
    // The client: ESM and CommonJS with bundled declarations; openapi-fetch stays a dependency.
    entry: { index: 'src/index.ts' },
    outDir: 'dist',
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    dts: true,
    clean: false,
  },
  {
    // The mock launcher behind `npm start` and the `gitea-mock` bin. Prism stays an import, not
    // part of the bundle: it is an optional dependency of the package.
    ...nodeTool,
    entry: { 'mock/cli': 'scripts/mock/cli.ts', 'mock/server': 'scripts/mock/server.ts' },
    deps: { neverBundle: [/^@stoplight\//] },
    // The proxy (with Ajv and the YAML parser for its answer check) is a chunk loaded only in
    // proxy mode, under a name that does not change from build to build.
    outputOptions: { chunkFileNames: 'mock/[name].mjs' },
  },
  // Live mode (`npm run test:live`): a development tool, not shipped in the package.
  // It bundles its development dependencies (Ajv, yaml) on purpose.
  { ...nodeTool, entry: { 'live/cli': 'scripts/live/cli.ts' }, deps: { onlyBundle: false } },
]);
