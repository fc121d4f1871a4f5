// The built client (dist/index.js) with openapi-fetch, bundled for the browser as an app would ship it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const BUILT = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));

/** The bundle's code; `minify` as an app's production build (and the size benchmark) makes it. */
export async function bundleBuiltClient({ minify = false } = {}): Promise<string> {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`npm run build\` (npm test's pretest does)`);
  const bundle = await rolldown({ input: BUILT, platform: 'browser', logLevel: 'silent' });
  const { output } = await bundle.generate({ format: 'esm', minify });
  await bundle.close();
  return output[0].code;
}
