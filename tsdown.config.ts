import { defineConfig } from 'tsdown';

export default defineConfig([
  {
    // The mock launcher behind `npm start` and the `gitea-mock` bin. Prism stays an import, not
    // part of the bundle: it is an optional dependency of the package.
    entry: { 'mock/cli': 'scripts/mock/cli.ts', 'mock/server': 'scripts/mock/server.ts' },
    outDir: 'dist',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    dts: false,
    clean: false,
    deps: { neverBundle: [/^@stoplight\//] },
  },
]);
