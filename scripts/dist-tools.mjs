// The tools only `npm run test:dist` uses, kept out of the development install: Node 22 and 24,
// Deno, Bun, Chromium (`@sparticuz/chromium`) with playwright-core, publint and attw. They are
// pinned by the lockfile of test/dist-tools/ and installed there, with `npm ci` and the run's npm
// cache, on first use: test:dist's pretest and its Vitest setup ask for them, and a later run
// finds them installed unless the lockfile changed. The folder is apart from the project's
// node_modules because the Node packages declare a `node` bin, which there would stand in for
// the project's Node in every npm script; for the same reason the install makes no bin links and
// runs no install scripts, which none of the tools needs.
//
// `node scripts/dist-tools.mjs` installs them; `node scripts/dist-tools.mjs <command> [args…]`
// runs one of their commands (`publint`, `attw`) with this Node.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const DIST_TOOLS = fileURLToPath(new URL('../test/dist-tools/', import.meta.url));
const INSTALL_LIMIT_MS = 15 * 60_000;
/** Written after a complete install: the hash of the manifest and lockfile it installed. */
const STAMP = join(DIST_TOOLS, 'node_modules', '.installed-from');

/** `require.resolve` and friends from the tools' folder: what `npm ci` installed there. */
export const distToolsRequire = createRequire(join(DIST_TOOLS, 'package.json'));

function wanted() {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(DIST_TOOLS, file)));
  return hash.digest('hex');
}

function installed() {
  try {
    return readFileSync(STAMP, 'utf8');
  } catch {
    return undefined;
  }
}

/** The environment without what an npm script passes down about this project (its prefix, its package's fields). */
function npmEnv(env = process.env) {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name]) => !/^(npm_package_|npm_lifecycle_|npm_config_(local_|global_)?prefix$|INIT_CWD$)/i.test(name),
    ),
  );
}

let installing;

/** Installs the tools unless the lockfile's are there already; once per process. Rejects saying why it could not. */
export function installDistTools() {
  installing ??= (async () => {
    const target = wanted();
    if (installed() === target) return;
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--no-bin-links'];
    try {
      await promisify(execFile)(npm, args, {
        cwd: DIST_TOOLS,
        env: npmEnv(),
        maxBuffer: 16 * 1024 * 1024,
        // Far beyond an install from a slow registry: a stalled one is stopped and reported.
        timeout: INSTALL_LIMIT_MS,
      });
    } catch (error) {
      // npm's own words, without its pointers to help and to the log.
      const said = String(error.stderr ?? '')
        .split('\n')
        .map((line) => line.replace(/^npm (error|ERR!)\s*/, '').trim())
        .filter((line) => line !== '' && !/^(Run "npm help|A complete log)/.test(line) && !line.startsWith('npm warn'))
        .slice(0, 3)
        .join(' ');
      const why = error.killed ? `npm ci ran past ${INSTALL_LIMIT_MS / 60_000} minutes` : said || String(error);
      throw new Error(`could not install the tools of npm run test:dist into ${DIST_TOOLS}: ${why}`);
    }
    writeFileSync(STAMP, target);
  })();
  // A failed install is not kept: the next caller tries again and reports its own failure.
  installing.catch(() => {
    installing = undefined;
  });
  return installing;
}

/** The JavaScript file behind `command`, among the bins the tools' direct dependencies declare. */
function distToolBin(command) {
  const { dependencies = {} } = JSON.parse(readFileSync(join(DIST_TOOLS, 'package.json'), 'utf8'));
  for (const name of Object.keys(dependencies)) {
    // A direct dependency's folder, where npm ci always puts it (not every package exports its package.json).
    const folder = join(DIST_TOOLS, 'node_modules', name);
    const { bin } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    const file = typeof bin === 'string' ? (command === name.split('/').pop() ? bin : undefined) : bin?.[command];
    if (file) return join(folder, file);
  }
  throw new Error(`no tool of ${DIST_TOOLS} provides the command ${command}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  try {
    await installDistTools();
    if (command) {
      const { status } = spawnSync(process.execPath, [distToolBin(command), ...args], { stdio: 'inherit' });
      // A tool killed by a signal has no status: a failure all the same.
      process.exitCode = status ?? 1;
    }
  } catch (error) {
    console.error(error.message);
    process.exitCode = 1;
  }
}
