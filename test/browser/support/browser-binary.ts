// Where the browser suites get Chromium: `CHROMIUM_PATH` when set; on Linux x64 the Chromium that
// the `@sparticuz/chromium` package, one of the tools of `npm run test:dist` (scripts/dist-tools.mjs),
// ships inside itself, so installing those tools is all the set-up; elsewhere a Chromium or Chrome
// on PATH. Without any of them the suites fail, never skip.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { distToolsRequire } from '../../../scripts/dist-tools.mjs';
import { isExecutable } from '../../support/executable.js';

const PACKAGE = '@sparticuz/chromium';
/** Names a system browser goes by, for platforms the package does not serve. */
const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome', 'chrome'];

/** The package's root folder and version: as installed among the test:dist tools, or at `root`. */
function sparticuz(root?: string): { root: string; version: string } {
  root ??= dirname(dirname(dirname(distToolsRequire.resolve(PACKAGE)))); // <root>/build/cjs/index.cjs
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { root, version };
}

function onPath(names: readonly string[], path: string | undefined): string | undefined {
  const folders = (path ?? '').split(delimiter).filter(Boolean);
  for (const name of names) {
    for (const folder of folders) {
      const candidate = join(folder, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Unpacks the package's Brotli-packed Chromium once per installed version, into the tools'
 * `node_modules/.cache/gitea-contract/` (so their reinstall starts afresh and no other project's
 * `/tmp/chromium` is ever picked up). The package unpacks into `os.tmpdir()` and trusts any file
 * already there; a child process with its own TMPDIR gives it a private staging folder, and one
 * rename publishes the result, so two suites unpacking at once, or a run killed half-way, never
 * leave a truncated browser behind.
 */
async function unpackSparticuz(cache: string | undefined, packageRoot: string | undefined): Promise<string> {
  const { root, version } = sparticuz(packageRoot);
  cache ??= join(root, '..', '..', '.cache', 'gitea-contract');
  const folder = join(cache, `chromium-${version}`);
  const executable = join(folder, 'chromium');
  if (existsSync(executable)) return executable;
  await mkdir(cache, { recursive: true });
  const staging = await mkdtemp(join(cache, `.chromium-${version}-`));
  try {
    const script = `const { default: chromium } = await import(${JSON.stringify(PACKAGE)}); process.stdout.write(await chromium.executablePath());`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      env: { ...process.env, TMPDIR: staging },
    });
    if (stdout !== join(staging, 'chromium')) throw new Error(`${PACKAGE} unpacked to ${stdout}, not into ${staging}`);
    try {
      await rename(staging, folder);
    } catch (error) {
      // Another suite published the same version first: use theirs.
      if (!existsSync(executable)) throw error;
    }
    return executable;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

export interface Host {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  arch: string;
  /** Where the packaged Chromium is unpacked; the tools' node_modules/.cache/gitea-contract unless given. */
  cache?: string;
  /** The folder of a package that unpacks like `@sparticuz/chromium`; the installed one unless given. */
  packageRoot?: string;
}

/** The Chromium executable the browser suites launch, with what to do when there is none. */
export async function chromiumExecutable({ env, platform, arch, cache, packageRoot }: Host = process): Promise<string> {
  const chosen = env.CHROMIUM_PATH;
  if (chosen) {
    if (!isExecutable(chosen))
      throw new Error(`CHROMIUM_PATH=${chosen} is not an executable file: point it at a Chromium or Chrome binary`);
    return chosen;
  }
  if (platform === 'linux' && arch === 'x64') return unpackSparticuz(cache, packageRoot);
  const system = onPath(SYSTEM_NAMES, env.PATH);
  if (system) return system;
  throw new Error(
    `No Chromium for ${platform}-${arch}: ${PACKAGE} ships one for Linux x64 only, and none of ${SYSTEM_NAMES.join(', ')} is on PATH. ` +
      'Install Chrome or Chromium and set CHROMIUM_PATH to its executable (macOS: "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome").',
  );
}
