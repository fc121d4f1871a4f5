// `gitea-mock postgres` as docs/sandbox-postgres.md tells a user to run it: the built bin starts a
// PostgreSQL server in a folder, a sandbox keeps a world in it, and the world is still there after
// both are stopped and started again. The password shows in no line. In `npm run test:dist`: it
// initialises a cluster.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../scripts/free-port.mjs';
import { call } from './support/call.js';
import { exitOf, launch, type Launched } from './support/launch.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const PASSWORD = 'pg-command-secret-4c1d';
const env = { ...process.env, PGPASSWORD: PASSWORD };

const running: { stop(): Promise<unknown> }[] = [];
const folders: string[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((each) => each.stop()));
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** Starts `gitea-mock postgres` and resolves once it says where it listens. */
function startServer(data: string, port: number): Promise<{ output(): string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'postgres', '--data', data, '--port', String(port)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const server = {
    output: () => output,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exitOf(child);
    },
  };
  running.push(server);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('the sandbox: ')) resolve(server);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`gitea-mock postgres exited (${code}) before it listened:\n${output}`)),
    );
  });
}

async function sandbox(state: string): Promise<Launched> {
  const mock = await launch(
    process.execPath,
    [CLI, 'sandbox', '--state', state, '--port', '0', '--quiet'],
    env,
    60_000,
  );
  running.push(mock);
  return mock;
}

describe('gitea-mock postgres', () => {
  // Two PostgreSQL starts (the first with initdb) and two sandbox starts, each bounded at 60 s by its helper.
  it('runs a server that keeps a sandbox world across restarts of both, its password in no line', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'gitea-mock-pg-command-'));
    folders.push(folder);
    // As root the server runs as the user postgres, which must reach the folder, as under any /tmp/x.
    await chmod(folder, 0o755);
    const port = await freePort();
    const data = join(folder, 'cluster');
    const first = await startServer(data, port);
    const state = `postgres://postgres@127.0.0.1:${port}/gitea_sandbox`;
    expect(first.output()).toContain(`--state ${state}`);

    const mock = await sandbox(state);
    const renamed = await call(`${mock.baseUrl}/repos/acme/rocket/hooks/4001`, 'PATCH', {
      token: 'pg-command',
      json: {
        active: false,
      },
    });
    expect(renamed.status).toBe(200);
    expect(await mock.stop()).toBe(0);
    expect(await first.stop()).toBe(0);

    const again = await startServer(data, port);
    const reopened = await sandbox(state);
    // An edit of nothing answers the hook as it stands.
    const read = await call(`${reopened.baseUrl}/repos/acme/rocket/hooks/4001`, 'PATCH', {
      token: 'pg-command',
      json: {},
    });
    expect(read.status).toBe(200);
    expect((read.json as { active: boolean }).active).toBe(false);
    for (const output of [first.output(), again.output(), mock.output(), reopened.output()])
      expect(output).not.toContain(PASSWORD);
  }, 300_000);

  it('refuses to start without PGPASSWORD, naming it', async () => {
    const child = spawn(process.execPath, [CLI, 'postgres', '--data', join(tmpdir(), 'never-made')], {
      env: { ...process.env, PGPASSWORD: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(output).toContain('set PGPASSWORD');
  });
});
