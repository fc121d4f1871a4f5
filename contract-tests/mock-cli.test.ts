// The launcher as users start it: the built bin and `npm start`, with its options, its output
// and its exit on signals.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '../scripts/free-port.mjs';
import { exitOf, launch } from './support/launch.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const SECRET = 'tok3n-that-must-not-be-logged';

function getOrgs(baseUrl: string, query = ''): Promise<Response> {
  return fetch(`${baseUrl}/admin/orgs${query}`, { headers: { authorization: `token ${SECRET}` } });
}

describe('gitea-mock (the built bin)', () => {
  it('prints one start-up line, one line per request without credentials, and exits 0 on SIGTERM', async () => {
    const mock = await launch(process.execPath, [CLI, '--port', '0']);
    expect(mock.output()).toMatch(
      /^gitea-mock: 20 operations on http:\/\/127\.0\.0\.1:\d+\/api\/v1 \(examples\); Ctrl-C stops\n$/,
    );
    expect((await getOrgs(mock.baseUrl, `?token=${SECRET}&limit=2`)).status).toBe(200);
    await expect.poll(() => mock.output()).toMatch(/GET \/api\/v1\/admin\/orgs 200 \d+ms\n/);
    expect(mock.output()).not.toContain(SECRET);
    expect(await mock.stop('SIGTERM')).toBe(0);
  });

  it('listens on --port, or on PORT from the environment', async () => {
    const port = await freePort();
    const byFlag = await launch(process.execPath, [CLI, '--port', String(port), '--host', '127.0.0.1']);
    expect(byFlag.baseUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
    await byFlag.stop();
    const byEnv = await launch(process.execPath, [CLI], { ...process.env, PORT: String(port) });
    expect(byEnv.baseUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
    expect((await getOrgs(byEnv.baseUrl)).status).toBe(200);
    await byEnv.stop();
  });

  it('refuses a bad option with the usage and exit code 2', async () => {
    const { execFile: exec } = await import('node:child_process');
    const child = exec(process.execPath, [CLI, '--port', 'http']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toContain('invalid port "http"');
    expect(stderr).toContain('Usage: gitea-mock');
  });

  it.each([
    [['sandbox', '--dynamic'], '--dynamic is an option of gitea-mock, not of gitea-mock sandbox'],
    [['sandbox', '--max-worlds', '0'], 'invalid --max-worlds "0": give a whole number from 1'],
  ])('refuses %j with the usage and exit code 2', async (args, message) => {
    const { execFile: exec } = await import('node:child_process');
    const child = exec(process.execPath, [CLI, ...args]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('gitea-mock sandbox');
  });

  // One mock for three behaviours: each start costs a second of CPU on a machine the suites share.
  it('--quiet prints no request lines; a second mock on its port fails with exit code 1 and a clear message; SIGINT exits 0', async () => {
    const first = await launch(process.execPath, [CLI, '--port', '0', '--quiet']);
    expect((await getOrgs(first.baseUrl)).status).toBe(200);
    const port = new URL(first.baseUrl).port;
    const { execFile: exec } = await import('node:child_process');
    const second = exec(process.execPath, [CLI, '--port', port]);
    let stderr = '';
    second.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitOf(second)).toBe(1);
    expect(stderr).toMatch(/cannot start: .*EADDRINUSE/);
    expect(await first.stop('SIGINT')).toBe(0);
    expect(first.output().trim().split('\n')).toHaveLength(1);
  });
});

describe('npm start', () => {
  it('serves the contract on the port given', async () => {
    const port = await freePort();
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    // The global setup made dist/ current, so this is the fast path: no build, just the launcher.
    const mock = await launch(
      npm,
      ['start', '--silent', '--', '--port', String(port), '--quiet'],
      { ...process.env },
      60_000,
    );
    expect(mock.baseUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
    expect(mock.output()).not.toContain('build:');
    expect((await getOrgs(mock.baseUrl)).status).toBe(200);
    await mock.stop();
  }, 90_000);
});
