// `gitea-mock --sandbox --state FILE`, run as users run it (the built bin): the worlds survive a
// restart and a kill -9 in the middle of a burst of writes (the file still loads and holds every
// write that was answered), and a file that is not a sandbox state file is refused, untouched.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectAll, createGiteaClient, unwrap } from '../src/index.js';
import { launch } from './support/launch.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gitea-contract-state-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const start = (state: string) => launch(process.execPath, [CLI, '--state', state, '--port', '0', '--quiet']);
const client = (baseUrl: string, token: string) => createGiteaClient({ baseUrl, auth: { token }, retry: 0 });

describe('--state FILE', () => {
  it('survives a restart, and creates the file, readable by its owner only, on the first write', async () => {
    const state = join(folder, 'restart.json');
    const first = await start(state);
    expect(first.output()).toContain(`(sandbox, state in ${state})`);
    await unwrap(client(first.baseUrl, 'alice-token').POST('/admin/users/{username}/rename', { params: { path: { username: 'bob' } }, body: { new_username: 'robert' } }));
    expect((await stat(state)).mode & 0o777).toBe(0o600);
    expect(await first.stop()).toBe(0);
    const second = await start(state);
    try {
      const members = await collectAll(client(second.baseUrl, 'alice-token'), '/teams/{id}/members', { params: { path: { id: 12001 } } });
      expect(members.map((user) => user.login)).toEqual(['alice', 'robert', 'carol']);
      // Another credential still starts from the seed.
      const other = await collectAll(client(second.baseUrl, 'other-token'), '/teams/{id}/members', { params: { path: { id: 12001 } } });
      expect(other.map((user) => user.login)).toEqual(['alice', 'bob', 'carol']);
      // No credential is written to the file: worlds are keyed by a hash.
      const text = await readFile(state, 'utf8');
      expect(text).not.toContain('alice-token');
      expect(text).not.toContain('other-token');
    } finally {
      await second.stop();
    }
  });

  it('holds every answered write after a kill -9 in the middle of a burst, and still loads', async () => {
    const state = join(folder, 'burst.json');
    const mock = await start(state);
    const gitea = client(mock.baseUrl, 'burst-token');
    const acknowledged: string[] = [];
    let killed = false;
    const writer = async (worker: number): Promise<void> => {
      for (let n = 0; !killed; n++) {
        const name = `S_${worker}_${n}`;
        try {
          const { response } = await gitea.PUT('/user/actions/secrets/{secretname}', { params: { path: { secretname: name } }, body: { data: 'x' } });
          if (response.status === 201) acknowledged.push(name);
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const burst = Promise.all(Array.from({ length: 16 }, (_, worker) => writer(worker)));
    while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
    killed = true;
    await mock.stop('SIGKILL');
    await burst;
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);

    const again = await start(state);
    try {
      const reader = client(again.baseUrl, 'burst-token');
      const statuses = await Promise.all(acknowledged.map(async (name) => (await reader.PUT('/user/actions/secrets/{secretname}', { params: { path: { secretname: name } }, body: { data: 'x' } })).response.status));
      // 204: the secret existed, so the write answered before the kill was on disk.
      expect(statuses.filter((status) => status !== 204)).toEqual([]);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it.each([
    ['not JSON', '{"gitea-mock-sandbox": 1, "worlds": {', 'is not JSON, so not a sandbox state file'],
    ['another program’s JSON', '{"hello":"world"}', 'is not a gitea-mock sandbox state file'],
    ['a newer format', '{"gitea-mock-sandbox": 2, "worlds": {}}', 'is a sandbox state file of format 2, not 1'],
    ['a world it did not write', `{"gitea-mock-sandbox": 1, "worlds": {"${'a'.repeat(64)}": {"format": 1}}}`, 'holds a world (aaaaaaaaaaaa…) that is not one the sandbox wrote'],
  ])('refuses %s at start with a clear message and leaves the file as it is', async (_case, text, why) => {
    const state = join(folder, `refused-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(state, text);
    const failure = await promisify(execFile)(process.execPath, [CLI, '--state', state, '--port', '0']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toBe(`gitea-mock: cannot start: --state ${state} ${why}; it is left as it is: move it away, or give another file\n`);
    expect(await readFile(state, 'utf8')).toBe(text);
  });
});
