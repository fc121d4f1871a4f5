import { defineConfig, type UserConfig } from 'tsdown';

/** Rolldown's names for the shared chunks (`*` for a dynamic entry), and ours. */
const CHUNK_NAMES: Record<string, string> = { chunk: 'runtime', dist: 'yaml', 'dist*': 'yaml-loader' };

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
    // The proxy (with Ajv for its answer check) is a chunk loaded only in proxy mode, and the YAML
    // parser, which the proxy and the front's check of body-less answers share, one loaded on
    // first use; all under names that do not change from build to build.
    outputOptions: { chunkFileNames: (chunk) => `mock/${CHUNK_NAMES[chunk.name + (chunk.isDynamicEntry ? '*' : '')] ?? '[name]'}.mjs` },
  },
  // Live mode (`npm run test:live`): a development tool, not shipped in the package.
  // It bundles its development dependencies (Ajv, yaml) on purpose.
  { ...nodeTool, entry: { 'live/cli': 'scripts/live/cli.ts' }, deps: { onlyBundle: false } },
]);
