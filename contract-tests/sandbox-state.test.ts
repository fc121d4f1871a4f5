// `gitea-mock sandbox --state DIR`, run as users run it (the built bin): the worlds survive a
// restart and a kill -9 in the middle of a burst of writes (the folder still loads and holds every
// write that was answered), and a path that is not a sandbox state folder is refused, untouched.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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

const start = (state: string) => launch(process.execPath, [CLI, 'sandbox', '--state', state, '--port', '0', '--quiet']);
const client = (baseUrl: string, token: string) => createGiteaClient({ baseUrl, auth: { token }, retry: 0 });

/** The file of a credential's world: its SHA-256, as the sandbox names it. */
const worldFile = (state: string, authorization: string): string =>
  join(state, `${createHash('sha256').update(authorization).digest('hex')}.json`);

/** Every file of a folder with its text, to show it was left as it was. */
async function contents(dir: string): Promise<Record<string, string>> {
  const names = (await readdir(dir)).sort();
  return Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await readFile(join(dir, name), 'utf8')] as const)),
  );
}

describe('--state DIR', () => {
  it("survives a restart, and creates the folder and the world's file, readable by their owner only, on the first write", async () => {
    const state = join(folder, 'restart');
    const first = await start(state);
    expect(first.output()).toContain(`(sandbox, state in ${state})`);
    await unwrap(
      client(first.baseUrl, 'alice-token').POST('/admin/users/{username}/rename', {
        params: { path: { username: 'bob' } },
        body: { new_username: 'robert' },
      }),
    );
    expect((await stat(state)).mode & 0o777).toBe(0o700);
    expect((await stat(worldFile(state, 'token alice-token'))).mode & 0o777).toBe(0o600);
    expect(await first.stop()).toBe(0);
    const second = await start(state);
    try {
      const members = await collectAll(client(second.baseUrl, 'alice-token'), '/teams/{id}/members', {
        params: { path: { id: 12001 } },
      });
      expect(members.map((user) => user.login)).toEqual(['alice', 'robert', 'carol']);
      // Another credential still starts from the seed.
      const other = await collectAll(client(second.baseUrl, 'other-token'), '/teams/{id}/members', {
        params: { path: { id: 12001 } },
      });
      expect(other.map((user) => user.login)).toEqual(['alice', 'bob', 'carol']);
      // No credential is written to the folder: worlds are keyed by a hash.
      const text = Object.entries(await contents(state))
        .flat()
        .join('\n');
      expect(text).not.toContain('alice-token');
      expect(text).not.toContain('other-token');
    } finally {
      await second.stop();
    }
  });

  it('reads a world of format 2, from before worlds knew branches, with the branches its repository and pull request name', async () => {
    const state = join(folder, 'format-2');
    const first = await start(state);
    const gitea = client(first.baseUrl, 'old-world-token');
    try {
      await unwrap(
        gitea.PUT('/user/actions/secrets/{secretname}', {
          params: { path: { secretname: 'OLD' } },
          body: { data: 'x' },
        }),
      );
    } finally {
      await first.stop();
    }
    const file = worldFile(state, 'token old-world-token');
    const { branches: _, ...old } = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...old, format: 2 }));
    const second = await start(state);
    try {
      const again = client(second.baseUrl, 'old-world-token');
      const retarget = (base: string) =>
        again.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { owner: 'acme', repo: 'rocket', index: 43 } },
          body: { base },
        });
      // develop is a branch of the seed of format 3 only.
      expect((await retarget('develop')).response.status).toBe(404);
      const secret = await again.PUT('/user/actions/secrets/{secretname}', {
        params: { path: { secretname: 'NEW' } },
        body: { data: 'y' },
      });
      expect(secret.response.status).toBe(201);
      const saved = JSON.parse(await readFile(file, 'utf8'));
      expect([saved.format, saved.branches]).toEqual([
        3,
        [
          { repo: 3001, name: 'main' },
          { repo: 3001, name: 'fix/countdown' },
        ],
      ]);
    } finally {
      await second.stop();
    }
  });

  it('holds every answered write after a kill -9 in the middle of a burst, and still loads', async () => {
    const state = join(folder, 'burst');
    const mock = await start(state);
    const gitea = client(mock.baseUrl, 'burst-token');
    const acknowledged: string[] = [];
    let killed = false;
    const writer = async (worker: number): Promise<void> => {
      for (let n = 0; !killed; n++) {
        const name = `S_${worker}_${n}`;
        try {
          const { response } = await gitea.PUT('/user/actions/secrets/{secretname}', {
            params: { path: { secretname: name } },
            body: { data: 'x' },
          });
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
      const statuses = await Promise.all(
        acknowledged.map(
          async (name) =>
            (
              await reader.PUT('/user/actions/secrets/{secretname}', {
                params: { path: { secretname: name } },
                body: { data: 'x' },
              })
            ).response.status,
        ),
      );
      // 204: the secret existed, so the write answered before the kill was on disk.
      expect(statuses.filter((status) => status !== 204)).toEqual([]);
    } finally {
      await again.stop();
    }
  }, 60_000);

  const world = `${'a'.repeat(64)}.json`;
  it.each([
    ['a file', { '': 'hello' }, 'is a file, not a sandbox state folder'],
    [
      'another program’s folder',
      { 'notes.txt': 'hello' },
      'is a folder that is not a gitea-mock sandbox state folder (it has no gitea-mock-sandbox.json)',
    ],
    [
      'a newer format',
      { 'gitea-mock-sandbox.json': '{"gitea-mock-sandbox": 3}' },
      'is a sandbox state folder of format 3, not 2',
    ],
    [
      'a world that is not JSON',
      { 'gitea-mock-sandbox.json': '{"gitea-mock-sandbox": 2}', [world]: '{"format": 2,' },
      `holds ${world}, which is not JSON`,
    ],
    [
      'a world it did not write',
      { 'gitea-mock-sandbox.json': '{"gitea-mock-sandbox": 2}', [world]: '{"format": 1}' },
      `holds ${world}, which is not a world the sandbox wrote: its format is 1, not 3`,
    ],
    [
      'a world of format 2 with a pull request that is no entry',
      {
        'gitea-mock-sandbox.json': '{"gitea-mock-sandbox": 2}',
        [world]: '{"format": 2, "repos": [], "pulls": [null]}',
      },
      `holds ${world}, which is not a world the sandbox wrote: nextId is not a positive id`,
    ],
  ])('refuses %s at start with a clear message and leaves it as it is', async (_case, files, why) => {
    const state = join(folder, `refused-${Math.random().toString(36).slice(2)}`);
    // '' is the path itself, as a file; other names are files in it, as a folder.
    if ('' in files) await writeFile(state, files['']);
    else {
      await mkdir(state);
      for (const [name, text] of Object.entries(files)) await writeFile(join(state, name), text);
    }
    const before = '' in files ? await readFile(state, 'utf8') : await contents(state);
    const failure = await promisify(execFile)(process.execPath, [CLI, 'sandbox', '--state', state, '--port', '0']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toBe(
      `gitea-mock: cannot start: --state ${state} ${why}; it is left as it is: move it away, or give another folder\n`,
    );
    // Left as it was: no lock, no marker, no file removed.
    expect('' in files ? await readFile(state, 'utf8') : await contents(state)).toEqual(before);
  });
});
