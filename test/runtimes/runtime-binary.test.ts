// Where the runtime suite finds Deno, Bun and Node 22 and 24: the binaries the test:dist tools
// (test/dist-tools/) installed for this platform, at the pinned versions; DENO_PATH, BUN_PATH,
// NODE22_PATH or NODE24_PATH when set; a failure that says why where there is none.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DIST_TOOLS } from '../../scripts/dist-tools.mjs';
import { nodeExecutable } from './support/node-versions.js';
import { runtimeExecutable } from './support/runtime-binary.js';

const run = promisify(execFile);
const pinned = (
  JSON.parse(readFileSync(join(DIST_TOOLS, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  }
).dependencies;

describe.runIf(process.platform === 'linux' && process.arch === 'x64')(
  'the binaries of the deno and bun packages among the test:dist tools (Linux x64)',
  () => {
    it('runs the pinned Deno', async () => {
      const { stdout } = await run(runtimeExecutable('deno', { env: {}, platform: 'linux', arch: 'x64' }), [
        '--version',
      ]);
      expect(stdout).toMatch(new RegExp(`^deno ${pinned.deno!.replaceAll('.', '\\.')} `));
    });

    it('runs the pinned Bun', async () => {
      const { stdout } = await run(runtimeExecutable('bun', { env: {}, platform: 'linux', arch: 'x64' }), [
        '--version',
      ]);
      expect(stdout.trim()).toBe(pinned.bun);
    });

    it('fails, saying so, where npm installed no binary for the platform', () => {
      // npm installs only this machine's platform package.
      expect(() => runtimeExecutable('bun', { env: {}, platform: 'linux', arch: 'arm64' })).toThrow(
        /^No bun binary for linux-arm64: @oven\/bun-linux-aarch64 is not installed/,
      );
      expect(() => runtimeExecutable('deno', { env: {}, platform: 'darwin', arch: 'arm64' })).toThrow(
        /^No deno binary for darwin-arm64: @deno\/darwin-arm64 is not installed/,
      );
    });
  },
);

describe('choosing a runtime binary', () => {
  it('takes DENO_PATH and BUN_PATH first', () => {
    expect(runtimeExecutable('deno', { env: { DENO_PATH: process.execPath }, platform: 'darwin', arch: 'arm64' })).toBe(
      process.execPath,
    );
    expect(runtimeExecutable('bun', { env: { BUN_PATH: process.execPath }, platform: 'linux', arch: 'riscv64' })).toBe(
      process.execPath,
    );
  });

  it('refuses a DENO_PATH that is not an executable file', () => {
    expect(() =>
      runtimeExecutable('deno', { env: { DENO_PATH: '/nonexistent/deno' }, platform: 'linux', arch: 'x64' }),
    ).toThrow('DENO_PATH=/nonexistent/deno is not an executable file');
  });

  it('fails, saying so, on a platform the packages ship nothing for', () => {
    expect(() => runtimeExecutable('deno', { env: {}, platform: 'linux', arch: 'riscv64' })).toThrow(
      'No deno binary for linux-riscv64: the deno npm package ships none for this platform. Set DENO_PATH to a deno executable.',
    );
    expect(() => runtimeExecutable('bun', { env: {}, platform: 'aix', arch: 'x64' })).toThrow(
      /^No bun binary for aix-x64: the bun npm package ships none/,
    );
  });
});

describe('choosing Node 22 and 24', () => {
  it('takes NODE22_PATH and NODE24_PATH first', async () => {
    expect(await nodeExecutable('22', { NODE22_PATH: process.execPath })).toBe(process.execPath);
    expect(await nodeExecutable('24', { NODE24_PATH: process.execPath })).toBe(process.execPath);
  });

  it('refuses a NODE24_PATH that is not an executable file', async () => {
    await expect(nodeExecutable('24', { NODE24_PATH: '/nonexistent/node' })).rejects.toThrow(
      'NODE24_PATH=/nonexistent/node is not an executable file',
    );
  });
});
