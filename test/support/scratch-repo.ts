// What the package and clone suites share: npm as a user runs it (without what `npm run` passes
// down about this project), and a copy of this repository as a fresh clone has it.
import { execFile } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { promisify } from 'node:util';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = promisify(execFile);

/** Git as scratch repositories need it, whatever the user's own configuration says (signing, hooks, identity). */
export const SCRATCH_GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
};

/** Left out of a copy: installed packages, build output and history. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.vitest-cache', 'mock/dist']);

/**
 * The environment without what `npm test` passes down about this project (prefixes, package
 * fields), which would point npm in another folder back at this one. The npm cache stays:
 * `.ci/run` gives its run a cache that starts empty, so what the installs need comes from the
 * registry there, and tarballs `npm ci` fetched are not fetched twice.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(npm_package_|npm_lifecycle_|npm_config_(local_|global_)?prefix$|INIT_CWD$)/i.test(name),
    ),
  );
}

/** Runs npm with `args` in `cwd` as a user does; its stdout. */
export async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await run(NPM, args, { cwd, env: { ...npmEnv(), ...env }, maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

/** Copies the repository at `root` to `to` as a fresh clone has it: no installed packages, no build output. */
export async function cleanCopy(root: string, to: string): Promise<void> {
  await cp(root, to, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source).split(sep);
      // Any node_modules: the runtime suite installs Node 22 and 24 below test/ too.
      return (
        !NOT_COPIED.has(path[0] ?? '') &&
        !NOT_COPIED.has(path.slice(0, 2).join('/')) &&
        !path.includes('node_modules') &&
        !source.endsWith('.tgz')
      );
    },
  });
}
