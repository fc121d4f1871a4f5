import { defineConfig } from 'tsdown';
import { tsgoPath } from './scripts/tsgo-path.mjs';

// The client: ESM and CommonJS with bundled declarations; openapi-fetch stays a dependency. The
// mock package (mock/) has a config of its own.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  outDir: 'dist',
  format: ['esm', 'cjs'],
  platform: 'neutral',
  target: 'es2022',
  tsconfig: 'tsconfig.build.json',
  dts: { tsgo: { path: tsgoPath } },
  clean: false,
});
