// Where the browser suites find Chromium: the npm package's own on Linux x64, unpacked once and
// atomically; CHROMIUM_PATH or a browser on PATH elsewhere; a clear failure when there is none.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumExecutable } from './support/browser-binary.js';

const run = promisify(execFile);
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gitea-contract-browser-binary-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * A package that unpacks as `@sparticuz/chromium` does (into `os.tmpdir()`, trusting a file
 * already there), slowly enough that two suites asking at once overlap, and a "browser" of a few
 * bytes: the staging and publishing without 170 MB of Brotli twice. The real package's unpacking
 * runs whenever the browser suites find no copy of its version (every clean clone, every upgrade).
 */
async function fakePackage(version: string): Promise<string> {
  const root = join(scratch, 'node_modules', '@sparticuz', 'chromium');
  await mkdir(root, { recursive: true });
  await writeFile(
    join(root, 'package.json'),
    JSON.stringify({ name: '@sparticuz/chromium', version, type: 'module', exports: './index.js' }),
  );
  await writeFile(
    join(root, 'index.js'),
    [
      "import { chmod, writeFile } from 'node:fs/promises';",
      "import { tmpdir } from 'node:os';",
      "import { join } from 'node:path';",
      'export default {',
      '  async executablePath() {',
      "    const path = join(tmpdir(), 'chromium');",
      `    await writeFile(path, '#!/bin/sh\\necho "Chromium ${version} (fake)"\\n');`,
      '    await new Promise((resolve) => setTimeout(resolve, 200));',
      '    await chmod(path, 0o755);',
      '    return path;',
      '  },',
      '};',
    ].join('\n'),
  );
  return root;
}

describe.runIf(process.platform === 'linux' && process.arch === 'x64')(
  'the Chromium of @sparticuz/chromium (Linux x64)',
  () => {
    it('gives suites asking at the same time one complete copy, and leaves no staging folder behind', async () => {
      const cache = join(scratch, 'cache');
      const host = {
        env: { PATH: process.env.PATH },
        platform: process.platform,
        arch: process.arch,
        cache,
        packageRoot: await fakePackage('143.0.4'),
      };
      const [first, second] = await Promise.all([chromiumExecutable(host), chromiumExecutable(host)]);
      expect(second).toBe(first);
      expect(first).toBe(join(cache, 'chromium-143.0.4', 'chromium'));
      // Only the published folder: each staging folder was renamed into place or removed.
      expect(await readdir(cache)).toEqual(['chromium-143.0.4']);
      const { stdout } = await run(first, ['--version']);
      expect(stdout).toBe('Chromium 143.0.4 (fake)\n');
      // A later call finds it without unpacking again.
      expect(await chromiumExecutable(host)).toBe(first);
    });

    // Unless CHROMIUM_PATH names another browser for the suites.
    it.runIf(!process.env.CHROMIUM_PATH)(
      "the browser the suites launch is the installed package's Chromium, unpacked and runnable",
      async () => {
        const executable = await chromiumExecutable();
        expect(executable).toMatch(/\/\.cache\/gitea-contract\/chromium-143\.0\.4\/chromium$/);
        const { stdout } = await run(executable, ['--version']);
        expect(stdout).toMatch(/^Chromium 143\./);
      },
      60_000,
    );
  },
);

describe('choosing a browser', () => {
  it('takes CHROMIUM_PATH first, on every platform', async () => {
    const own = join(scratch, 'my-chrome');
    await writeFile(own, '#!/bin/sh\n');
    await chmod(own, 0o755);
    expect(await chromiumExecutable({ env: { CHROMIUM_PATH: own }, platform: 'linux', arch: 'x64' })).toBe(own);
    expect(await chromiumExecutable({ env: { CHROMIUM_PATH: own }, platform: 'darwin', arch: 'arm64' })).toBe(own);
  });

  it('refuses a CHROMIUM_PATH that is not an executable file', async () => {
    const missing = join(scratch, 'no-such-browser');
    await expect(
      chromiumExecutable({ env: { CHROMIUM_PATH: missing }, platform: 'linux', arch: 'x64' }),
    ).rejects.toThrow(`CHROMIUM_PATH=${missing} is not an executable file`);
    await expect(
      chromiumExecutable({ env: { CHROMIUM_PATH: scratch }, platform: 'linux', arch: 'x64' }),
    ).rejects.toThrow(`CHROMIUM_PATH=${scratch} is not an executable file`);
  });

  it('uses a Chromium on PATH where the package has no build', async () => {
    const bin = join(scratch, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'chromium'), '#!/bin/sh\n');
    await chmod(join(bin, 'chromium'), 0o755);
    expect(await chromiumExecutable({ env: { PATH: bin }, platform: 'darwin', arch: 'arm64' })).toBe(
      join(bin, 'chromium'),
    );
  });

  it('fails, saying what to do, where no browser can be had', async () => {
    const empty = await mkdtemp(join(scratch, 'empty-'));
    const attempt = chromiumExecutable({ env: { PATH: empty }, platform: 'linux', arch: 'arm64' });
    await expect(attempt).rejects.toThrow(
      /^No Chromium for linux-arm64: @sparticuz\/chromium ships one for Linux x64 only/,
    );
    await expect(attempt).rejects.toThrow(/set CHROMIUM_PATH to its executable/);
  });
});
