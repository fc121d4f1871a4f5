// The launcher as users start it: the built bin and `npm start`, with its options, its output
// and its exit on signals.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../scripts/free-port.mjs';
import { call, type Reply } from './support/call.js';
import { exitOf, launch } from './support/launch.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const SECRET = 'tok3n-that-must-not-be-logged';

function getOrgs(baseUrl: string, query = ''): Promise<Reply> {
  return call(`${baseUrl}/admin/orgs${query}`, 'GET', { token: SECRET });
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

  it.each([
    [['--help'], 'Usage: gitea-mock [options] [document]', ['--dynamic'], ['--state', '--strict', '--base-url']],
    [
      ['sandbox', '--help'],
      'Usage: gitea-mock sandbox',
      ['--state', '--webhook '],
      ['--dynamic', '--strict', '--forward '],
    ],
    [
      ['proxy', '--help'],
      'Usage: gitea-mock proxy <url>',
      ['--strict', '--junit', '--allow-insecure-http'],
      ['--state', '--dynamic'],
    ],
    [['verify', '--help'], 'Usage: gitea-mock verify', ['--base-url', '--junit'], ['--port', '--state', '--strict']],
    [
      ['webhooks', '--help'],
      'Usage: GITEA_WEBHOOK_SECRET=… gitea-mock webhooks',
      ['--forward '],
      ['--secret', '--state'],
    ],
    [['trigger', '--help'], 'Usage: gitea-mock trigger <event>', ['--action'], ['--port', '--state']],
    [['postgres', '--help'], 'Usage: PGPASSWORD=… gitea-mock postgres', ['--data'], ['--state', '--quiet']],
  ])('%j prints the help of that command alone', async (args, usage, shown, absent) => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args]);
    expect(stdout.startsWith(usage)).toBe(true);
    for (const option of shown) expect(stdout).toContain(option);
    for (const option of absent) expect(stdout).not.toMatch(new RegExp(`^ +(-\\w, )?${option}`, 'm'));
  });

  it.each([
    [
      ['sandbox', '--webhook-secret', 'x'],
      'gitea-mock: --webhook-secret is not an option: secrets come from the environment only',
      'GITEA_WEBHOOK_SECRET',
    ],
    [
      ['webhooks', '--secret', 'x'],
      'gitea-mock webhooks: --secret is not an option: secrets come from the environment only',
      'GITEA_WEBHOOK_SECRET',
    ],
    [['postgres', '--password', 'x'], 'gitea-mock postgres: --password is not an option', 'PGPASSWORD'],
    [
      ['proxy', 'https://gitea.example.org', '--state', 'x'],
      'gitea-mock: --state is an option of gitea-mock sandbox, not of gitea-mock proxy',
      'Usage: gitea-mock proxy',
    ],
    [['--sandbox'], 'gitea-mock: --sandbox is not an option: run gitea-mock sandbox', 'Usage: gitea-mock'],
  ])('refuses %j with exit code 2, naming where it belongs', async (args, line, named) => {
    const failure = await promisify(execFile)(process.execPath, [CLI, ...args]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure.code).toBe(2);
    expect(failure.stderr.startsWith(line)).toBe(true);
    expect(failure.stderr).toContain(named);
    expect(failure.stderr).not.toMatch(/ x\b/);
  });

  it('serve() runs in process: a usage error resolves with exit code 2, the help with 0', async () => {
    const { serve } = await import('../mock/src/cli/serve.js');
    const lines = { stdout: '', stderr: '' };
    const io = {
      stdout: (text: string) => void (lines.stdout += text),
      stderr: (text: string) => void (lines.stderr += text),
    };
    const stop = new AbortController();
    expect(await serve(['sandbox', '--max-worlds', '0'], {}, io, stop.signal)).toBe(2);
    expect(lines.stderr).toMatch(/^gitea-mock: invalid --max-worlds "0"/);
    expect(await serve(['proxy', '--help'], {}, io, stop.signal)).toBe(0);
    expect(lines.stdout).toMatch(/^Usage: gitea-mock proxy <url>/);
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
