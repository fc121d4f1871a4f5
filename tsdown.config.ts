import { defineConfig, type UserConfig } from 'tsdown';
import { tsgoPath } from './scripts/tsgo-path.mjs';

/**
 * The CommonJS build `require`s openapi-fetch's CommonJS build, which marks itself `__esModule`
 * and exports the client factory as `default`, as compiled ES modules do. rolldown wraps such a
 * require with Node's ESM interop when the importing source belongs to a `"type": "module"`
 * package, as ours does, and that makes the default import the whole `exports` object: `(0,
 * openapi_fetch.default) is not a function` in every CommonJS app. Here the wrap takes the
 * module's own `default`, as a CommonJS consumer resolves it.
 */
function commonJsDefault(): NonNullable<UserConfig['plugins']> {
  return {
    name: 'gitea-contract:commonjs-default',
    renderChunk(code, { fileName }, { format }) {
      if (format !== 'cjs' || !fileName.endsWith('.cjs')) return null;
      const fixed = code.replace(/\b__toESM\((\w+), 1\)/g, '__toESM($1)');
      if (fixed === code)
        throw new Error('the CommonJS build no longer wraps a require with Node interop: check this plugin is needed');
      return { code: fixed };
    },
  };
}

const shared = {
  outDir: 'dist',
  format: ['esm', 'cjs'],
  platform: 'neutral',
  target: 'es2022',
  tsconfig: 'tsconfig.build.json',
  dts: { tsgo: { path: tsgoPath } },
  clean: false,
  // rolldown's note that declarations take most of the build: known, and no action to take.
  checks: { pluginTimings: false },
} satisfies UserConfig;

// The client: ESM and CommonJS with bundled declarations; openapi-fetch stays a dependency. Its
// internals for gitea-mock (`gitea-contract/internal`) are a build of their own, so that neither
// entry is split into shared chunks. The mock package (mock/) has a config of its own.
export default defineConfig([
  { ...shared, entry: { index: 'src/index.ts' }, plugins: [commonJsDefault()] },
  { ...shared, entry: { internal: 'src/internal.ts' } },
]);
