// A file written when a run ends (live mode's --report and --junit, the proxy's --report): its
// folder is checked when the run starts, so that a wrong path is told at once, as a wrong option,
// and not when the run is over and its results are lost.
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Why `file` cannot be written, or undefined when its folder is there and may be written in. */
export function outputFileProblem(file: string): string | undefined {
  const path = resolve(file);
  const folder = dirname(path);
  try {
    if (!statSync(folder).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(folder, constants.W_OK);
  } catch (error) {
    return `cannot write in ${folder} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  try {
    if (statSync(path).isDirectory()) return `${path} is a folder`;
  } catch {
    // Not there yet: it will be made.
  }
  return undefined;
}
