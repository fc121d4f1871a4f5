// The native TypeScript 7 compiler (the `typescript-7` devDependency) as an executable path, for
// the builds' declaration files: its package exports no path to the binary, only a helper that finds it.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = dirname(createRequire(import.meta.url).resolve('typescript-7/package.json'));
const { default: getExePath } = await import(pathToFileURL(join(root, 'lib/getExePath.js')).href);
export const tsgoPath = getExePath();
