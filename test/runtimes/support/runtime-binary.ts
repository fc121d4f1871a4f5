// Where the runtime suite finds Deno and Bun: DENO_PATH or BUN_PATH when set; else the binary the
// `deno` or `bun` package of the test:dist tools (scripts/dist-tools.mjs, test/dist-tools/) carries
// for this platform, taken straight from the platform package (`@deno/linux-x64-glibc`,
// `@oven/bun-linux-x64`, …), as their install scripts never run. Without one the suite fails
// saying so, never skips.
import { dirname, join } from 'node:path';
import { distToolsRequire } from '../../../scripts/dist-tools.mjs';
import { isExecutable } from '../../support/executable.js';

export type Runtime = 'deno' | 'bun';

export interface Host {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  arch: string;
}

const OVERRIDE: Record<Runtime, string> = { deno: 'DENO_PATH', bun: 'BUN_PATH' };

/** The platform package that carries the binary, and the binary's path inside it. */
function platformPackage(runtime: Runtime, { platform, arch }: Host): { name: string; exe: string } | undefined {
  if (arch !== 'x64' && arch !== 'arm64') return undefined;
  const windows = platform === 'win32';
  if (runtime === 'deno') {
    const target =
      platform === 'linux'
        ? `linux-${arch}-glibc`
        : platform === 'darwin' || windows
          ? `${platform}-${arch}`
          : undefined;
    return target === undefined ? undefined : { name: `@deno/${target}`, exe: windows ? 'deno.exe' : 'deno' };
  }
  const os = windows ? 'windows' : platform;
  if (!['darwin', 'linux', 'windows', 'freebsd'].includes(os)) return undefined;
  return { name: `@oven/bun-${os}-${arch === 'arm64' ? 'aarch64' : 'x64'}`, exe: windows ? 'bin/bun.exe' : 'bin/bun' };
}

function installed(name: string): string | undefined {
  try {
    return dirname(distToolsRequire.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/** The executable of `runtime` for this host, or an error saying why there is none. */
export function runtimeExecutable(runtime: Runtime, host: Host = process): string {
  const chosen = host.env[OVERRIDE[runtime]];
  if (chosen) {
    if (!isExecutable(chosen)) throw new Error(`${OVERRIDE[runtime]}=${chosen} is not an executable file`);
    return chosen;
  }
  const target = `${host.platform}-${host.arch}`;
  const pkg = platformPackage(runtime, host);
  if (!pkg)
    throw new Error(
      `No ${runtime} binary for ${target}: the ${runtime} npm package ships none for this platform. Set ${OVERRIDE[runtime]} to a ${runtime} executable.`,
    );
  const root = installed(pkg.name);
  const exe = root && join(root, pkg.exe);
  if (exe && isExecutable(exe)) return exe;
  throw new Error(
    `No ${runtime} binary for ${target}: ${pkg.name} is not installed (npm skips it on another C library, or when the registry lacks it). ` +
      `Install the tools of npm run test:dist (node scripts/dist-tools.mjs), or set ${OVERRIDE[runtime]} to a ${runtime} executable.`,
  );
}
