// The sandbox loses nothing under hostile input: each attack that would take it down, or take
// writes away from others, meets a limit that answers in the service's dialect and changes
// nothing. Small budgets through the options keep every case to kilobytes and seconds; the
// process-level ones (the lock, refusals at start, a burst of renders) run the built bin.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Backing,
  createMarkdownRenderer,
  heapLimit,
  inFlightBudget,
  loadOperations,
  readDocumentFile,
  MARKDOWN_LIMITS,
  type SandboxOptions,
  seedWorld,
} from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { launch, type Launched } from './support/launch.js';
import { call, type Reply } from './support/call.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const KiB = 1024;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gitea-contract-hostile-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const reset = (mock: { baseUrl: string }, token: string): Promise<Reply> =>
  call(`${mock.baseUrl.replace(/\/api\/v1$/, '')}/__sandbox/reset`, 'POST', { token });
const renameUser = (base: string, token: string, from: string, to: string): Promise<Reply> =>
  call(`${base}/admin/users/${from}/rename`, 'POST', { token, json: { new_username: to } });
const members = async (base: string, token: string): Promise<string[]> =>
  ((await call(`${base}/teams/12001/members`, 'GET', { token })).json as { login: string }[]).map((user) => user.login);

/** An armored key block of about `size` bytes, different each time. */
function armoredKey(size: number): string {
  const lines = randomBytes(Math.floor((size * 3) / 4))
    .toString('base64')
    .match(/.{1,64}/g)!;
  return `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${lines.join('\n')}\n-----END PGP PUBLIC KEY BLOCK-----\n`;
}

/** A sandbox in this process, closed when `test` ends. */
async function withSandbox(options: SandboxOptions, test: (mock: MockServer) => Promise<void>): Promise<void> {
  const warnings: string[] = [];
  const mock = await startMockServer({ port: 0, sandbox: options, onWarning: (line) => warnings.push(line) });
  try {
    await test(mock);
  } finally {
    await mock.close();
  }
  expect(warnings).toEqual([]);
}

/** The file of a credential's world: its SHA-256, as the sandbox names it. */
const worldFile = (state: string, token: string): string =>
  join(state, `${createHash('sha256').update(`token ${token}`).digest('hex')}.json`);
const worldFiles = async (state: string): Promise<string[]> =>
  (await readdir(state)).filter((name) => /^[0-9a-f]{64}\.json$/.test(name));

/**
 * The built bin with `args`, as a command and its arguments; under `ulimit -f` when given a file
 * size limit in KiB: no file of the process may pass it, as root too, and as Node ignores
 * SIGXFSZ, a write past it fails with EFBIG, as on a full disk.
 */
function cli(args: string[], fileLimitKiB?: number): [string, string[]] {
  const all = [CLI, 'sandbox', ...args, '--port', '0', '--quiet'];
  if (fileLimitKiB === undefined) return [process.execPath, all];
  return ['bash', ['-c', `ulimit -f ${fileLimitKiB} && exec "$0" "$@"`, process.execPath, ...all]];
}

/** Runs the built bin to its end: exit code and what it wrote to stderr. */
async function refusal(args: string[], fileLimitKiB?: number): Promise<{ code: number; stderr: string }> {
  return promisify(execFile)(...cli(args, fileLimitKiB), { timeout: 20_000 }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
}

const startCli = (args: string[], fileLimitKiB?: number): Promise<Launched> => launch(...cli(args, fileLimitKiB));

describe('1. a world is bounded in bytes, not only in records', () => {
  it('distinct keys past --max-world-bytes answer 413 naming the budget and the reset, store nothing, and leave other worlds writing', async () => {
    await withSandbox({ maxWorldBytes: 96 * KiB }, async (mock) => {
      const first = armoredKey(20 * KiB);
      expect(
        (await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', { token: 'filler', json: { armored_public_key: first } }))
          .status,
      ).toBe(201);
      // Each key is kept twice (as sent, and armored in the record): the next ones pass 96 KiB.
      const refused = armoredKey(20 * KiB);
      const full = await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
        token: 'filler',
        json: { armored_public_key: refused },
      });
      const message = `this sandbox world would hold ${/hold (\d+) bytes/.exec(full.json.message)?.[1]} bytes, more than its ${96 * KiB} (--max-world-bytes); POST /__sandbox/reset with the same credential starts it afresh`;
      expect([full.status, full.json]).toEqual([413, { message, url: `${mock.origin}/api/swagger` }]);
      // Nothing was stored: the refused key is refused again for its size, not as a duplicate.
      expect(
        (
          await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
            token: 'filler',
            json: { armored_public_key: refused },
          })
        ).status,
      ).toBe(413);
      expect(
        (await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', { token: 'filler', json: { armored_public_key: first } }))
          .status,
      ).toBe(422);
      // Edits that do not grow the world go on; other worlds write; the reset makes room.
      expect((await renameUser(mock.baseUrl, 'filler', 'bob', 'bobby')).status).toBe(204);
      expect(
        (await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', { token: 'other', json: { armored_public_key: refused } }))
          .status,
      ).toBe(201);
      expect((await reset(mock, 'filler')).status).toBe(200);
      expect(
        (
          await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
            token: 'filler',
            json: { armored_public_key: refused },
          })
        ).status,
      ).toBe(201);
    });
  });

  it('a stored text, object or list past its bound answers 413 naming it, and changes nothing', async () => {
    await withSandbox({}, async (mock) => {
      const long = 'x'.repeat(1024 * 1024 + 1);
      const cases: [string, string, unknown, string][] = [
        [
          'POST',
          '/repos/migrate',
          { clone_addr: `https://git.example.net/${long}`, repo_name: 'big' },
          `body.clone_addr is ${1024 * 1024 + 25} bytes long, more than the 1048576 the sandbox keeps of one text`,
        ],
        [
          'PATCH',
          '/repos/acme/rocket/pulls/43',
          { body: long },
          'body.body is 1048577 bytes long, more than the 1048576 the sandbox keeps of one text',
        ],
        [
          'PATCH',
          '/repos/acme/rocket/milestones/6001',
          { description: long },
          'body.description is 1048577 bytes long, more than the 1048576 the sandbox keeps of one text',
        ],
        [
          'POST',
          '/user/applications/oauth2',
          { name: 'many', redirect_uris: Array.from({ length: 101 }, (_, n) => `https://app.example.net/${n}`) },
          'body.redirect_uris holds 101 items, more than the 100 the sandbox keeps of one list',
        ],
        [
          'PATCH',
          '/repos/acme/rocket/hooks/4001',
          { config: Object.fromEntries(Array.from({ length: 65 }, (_, n) => [`k${n}`, 'v'])) },
          'body.config holds 65 keys, more than the 64 the sandbox keeps of one object',
        ],
        // A name is copied into every URL of the user's repositories: a long one would multiply.
        [
          'POST',
          '/admin/users/alice/rename',
          { new_username: 'a'.repeat(256) },
          'body.new_username is 256 bytes long, more than the 255 the sandbox keeps of a user name',
        ],
      ];
      for (const [method, path, body, message] of cases) {
        const answer = await call(`${mock.baseUrl}${path}`, method, { token: 'bounded', json: body });
        expect([path, answer.status, answer.json]).toEqual([path, 413, { message, url: `${mock.origin}/api/swagger` }]);
      }
      // repoEditHook keeps only the keys Gitea keeps, however many edits send others.
      const keys = (from: number) => Object.fromEntries(Array.from({ length: 40 }, (_, n) => [`k${from + n}`, 'v']));
      for (const from of [0, 40])
        expect(
          (
            await call(`${mock.baseUrl}/repos/acme/rocket/hooks/4001`, 'PATCH', {
              token: 'bounded',
              json: { config: keys(from) },
            })
          ).status,
        ).toBe(200);
      const hook = await call(`${mock.baseUrl}/repos/acme/rocket/hooks/4001`, 'PATCH', { token: 'bounded', json: {} });
      expect(Object.keys(hook.json.config)).toEqual(['url', 'content_type']);
      // The refused writes changed nothing.
      expect(
        (await call(`${mock.baseUrl}/repos/acme/rocket/pulls/43`, 'PATCH', { token: 'bounded', json: {} })).json.body,
      ).not.toBe(long);
      expect(await members(mock.baseUrl, 'bounded')).toEqual(['alice', 'bob', 'carol']);
      expect(
        (
          await call(`${mock.baseUrl}/repos/migrate`, 'POST', {
            token: 'bounded',
            json: {
              clone_addr: 'https://git.example.net/a.git',
              repo_name: 'big',
            },
          })
        ).status,
      ).toBe(201);
    });
  });

  it('refuses budgets that cannot hold the seed, or whose worlds together could not fit in half the heap', async () => {
    // The sandbox's refusals, in this process (the bin prints them after "gitea-mock: cannot start: " with exit code 1, as section 8 shows).
    await expect(startMockServer({ port: 0, sandbox: { maxWorldBytes: 1024 } })).rejects.toThrow(
      /^--max-world-bytes 1024 cannot hold the seed world \(\d+ bytes\)$/,
    );
    await expect(
      startMockServer({ port: 0, sandbox: { maxWorlds: 1000, maxWorldBytes: 256 * 1024 * 1024 } }),
    ).rejects.toThrow(
      /^--max-worlds 1000 of --max-world-bytes 268435456 could take 256000 MiB, more than half of this Node's heap \(\d+ MiB of \d+\): lower either, or give Node more with --max-old-space-size$/,
    );
    // The command line's own, before anything starts.
    expect(await refusal(['--max-world-bytes', '16X'])).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /^gitea-mock: invalid --max-world-bytes "16X": give a whole number of bytes, or of K, M or G \(such as 16M\)\n/,
      ),
    });
  });
});

describe('2. a save writes the world that changed, not every world', () => {
  it("keeps a file per world: writes to one leave the others' files as they were, and a full world does not stop them", async () => {
    const state = join(folder, 'per-world');
    await withSandbox({ state, maxWorldBytes: 64 * KiB }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'quiet', 'bob', 'robert')).status).toBe(204);
      expect((await renameUser(mock.baseUrl, 'busy', 'bob', 'bobby')).status).toBe(204);
      const quiet = await stat(worldFile(state, 'quiet'));
      for (let n = 0; n < 20; n++)
        expect(
          (await call(`${mock.baseUrl}/user/actions/secrets/S${n}`, 'PUT', { token: 'busy', json: { data: 'x' } }))
            .status,
        ).toBe(201);
      // The busy world's file was replaced 20 times; the quiet one's was never touched.
      expect(await stat(worldFile(state, 'quiet'))).toMatchObject({
        ino: quiet.ino,
        mtimeMs: quiet.mtimeMs,
        size: quiet.size,
      });
      expect(JSON.parse(await readFile(worldFile(state, 'busy'), 'utf8')).secrets).toHaveLength(20);
      // The busy world at its budget is refused; the quiet one still writes, and is saved.
      let status = 201;
      for (let n = 0; status === 201 && n < 100; n++)
        status = (
          await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
            token: 'busy',
            json: { armored_public_key: armoredKey(4 * KiB) },
          })
        ).status;
      expect(status).toBe(413);
      expect((await renameUser(mock.baseUrl, 'quiet', 'carol', 'caroline')).status).toBe(204);
      expect((await stat(worldFile(state, 'quiet'))).ino).not.toBe(quiet.ino);
    });
  });

  it('applies writes that arrive together to one copy of a large world: 100 of them cost a few single writes, not 100', async () => {
    const state = join(folder, 'batched');
    await withSandbox({ state }, async (mock) => {
      // 6 MiB of keys: each is kept twice.
      for (let n = 0; n < 3; n++)
        expect(
          (
            await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
              token: 'large',
              json: { armored_public_key: armoredKey(1000 * KiB) },
            })
          ).status,
        ).toBe(201);
      const thread = () =>
        call(`${mock.baseUrl}/notifications/threads/10001?to-status=pinned`, 'PATCH', { token: 'large' }).then(
          (answer) => answer.status,
        );
      /** CPU time of this process (the sandbox is in it) while `work` runs, in ms. */
      const cpu = async (work: () => Promise<unknown>): Promise<number> => {
        const before = process.cpuUsage();
        await work();
        const { user, system } = process.cpuUsage(before);
        return (user + system) / 1000;
      };
      // CPU time, not wall time: a loaded machine slows both measures alike.
      const single = Math.min(await cpu(thread), await cpu(thread), await cpu(thread));
      let statuses: number[] = [];
      const hundred = await cpu(async () => {
        statuses = await Promise.all(Array.from({ length: 100 }, thread));
      });
      expect(statuses).toEqual(Array(100).fill(205));
      // Each write copied, measured and wrote the whole world: 100 writes cost about 100 single ones.
      expect(hundred / single).toBeLessThan(30);
    });
  }, 30_000);

  it('judges writes that arrive together one at a time once together they pass a limit: only those past it are refused, the others kept', async () => {
    const state = join(folder, 'judged');
    await withSandbox({ state, maxRecords: 5, maxWorldBytes: 128 * KiB }, async (mock) => {
      const secrets = await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          call(`${mock.baseUrl}/user/actions/secrets/S${n}`, 'PUT', { token: 'counted', json: { data: 'x' } }).then(
            (answer) => answer.status,
          ),
        ),
      );
      expect(secrets.filter((status) => status === 201)).toHaveLength(5);
      expect(secrets.filter((status) => status === 403)).toHaveLength(5);
      // Keys of 20 KiB, kept twice: two fit beside the seed, four do not.
      const keys = Array.from({ length: 4 }, () => armoredKey(20 * KiB));
      const statuses = await Promise.all(
        keys.map((key) =>
          call(`${mock.baseUrl}/user/gpg_keys`, 'POST', { token: 'weighed', json: { armored_public_key: key } }).then(
            (answer) => answer.status,
          ),
        ),
      );
      expect(statuses.filter((status) => status === 201)).toHaveLength(2);
      expect(statuses.filter((status) => status === 413)).toHaveLength(2);
      const counted = JSON.parse(await readFile(worldFile(state, 'counted'), 'utf8')) as { secrets: unknown[] };
      expect(counted.secrets).toHaveLength(5);
      const weighed = JSON.parse(await readFile(worldFile(state, 'weighed'), 'utf8')) as {
        gpgKeys: { armored: string }[];
      };
      expect(weighed.gpgKeys.map((entry) => entry.armored).sort()).toEqual(
        keys
          .filter((_, n) => statuses[n] === 201)
          .map((key) => key.trim())
          .sort(),
      );
    });
  });

  it('saves different worlds at once only while their copies and texts fit in an eighth of the heap', async () => {
    // A store that holds each save for a while, so that every save in progress shows, and that
    // says each world is as large as a quarter of that eighth: two batches at once at most.
    const { seed } = seedWorld(await loadOperations(), readDocumentFile().document);
    const keyOf = (n: number): string => createHash('sha256').update(`token w${n}`).digest('hex');
    const worlds = new Map(
      Array.from({ length: 10 }, (_, n) => [
        keyOf(n),
        { world: structuredClone(seed), bytes: Math.floor(inFlightBudget(heapLimit()) / 4) },
      ]),
    );
    let saving = 0;
    let most = 0;
    const saved: string[] = [];
    const store: Backing = {
      worlds,
      async save(key, text) {
        most = Math.max(most, ++saving);
        await new Promise((resolve) => setTimeout(resolve, 100));
        saving--;
        saved.push(JSON.parse((await text()).join('')).threads[0].pinned ? key : 'not pinned');
      },
      drop: async () => {},
      close: async () => {},
    };
    await withSandbox({ store, maxWorlds: 10 }, async (mock) => {
      const statuses = await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          call(`${mock.baseUrl}/notifications/threads/10001?to-status=pinned`, 'PATCH', { token: `w${n}` }).then(
            (answer) => answer.status,
          ),
        ),
      );
      expect(statuses).toEqual(Array(10).fill(205));
    });
    expect(most).toBeLessThanOrEqual(2);
    expect(saved.sort()).toEqual([...worlds.keys()].sort());
  });

  it('keeps 400 concurrent writes to one world, every one in its file', async () => {
    const state = join(folder, 'concurrent');
    await withSandbox({ state }, async (mock) => {
      const statuses = await Promise.all(
        Array.from({ length: 400 }, (_, n) =>
          call(`${mock.baseUrl}/user/actions/secrets/C${n}`, 'PUT', { token: 'crowd', json: { data: 'x' } }).then(
            (answer) => answer.status,
          ),
        ),
      );
      expect(statuses.filter((status) => status !== 201)).toEqual([]);
      const saved = JSON.parse(await readFile(worldFile(state, 'crowd'), 'utf8')) as { secrets: { name: string }[] };
      expect(new Set(saved.secrets.map((secret) => secret.name))).toEqual(
        new Set(Array.from({ length: 400 }, (_, n) => `C${n}`)),
      );
    });
  }, 60_000);
});

describe("3. resets and drops keep to --max-worlds, and a world's file follows it", () => {
  it("resets from many credentials keep no world and write no file; a reset removes its world's file", async () => {
    const state = join(folder, 'resets');
    await withSandbox({ state, maxWorlds: 3 }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'kept', 'bob', 'robert')).status).toBe(204);
      const statuses = await Promise.all(
        Array.from({ length: 50 }, (_, n) => reset(mock, `stranger-${n}`).then((answer) => answer.status)),
      );
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(await worldFiles(state)).toEqual([`${createHash('sha256').update('token kept').digest('hex')}.json`]);
      // Within the cap, the world written before them is still there.
      expect(await members(mock.baseUrl, 'kept')).toEqual(['alice', 'robert', 'carol']);
      expect((await reset(mock, 'kept')).status).toBe(200);
      expect(await worldFiles(state)).toEqual([]);
      expect(await members(mock.baseUrl, 'kept')).toEqual(['alice', 'bob', 'carol']);
    });
  });

  it('drops the least recently used world, and its file, when a reset world is written again past the cap', async () => {
    const state = join(folder, 'reset-cap');
    await withSandbox({ state, maxWorlds: 2 }, async (mock) => {
      for (const token of ['one', 'two'])
        expect((await renameUser(mock.baseUrl, token, 'bob', 'robert')).status).toBe(204);
      expect((await reset(mock, 'three')).status).toBe(200);
      expect((await renameUser(mock.baseUrl, 'three', 'bob', 'robert')).status).toBe(204);
      // 'one' was the least recently used: dropped, with its file, once the queue behind it ran.
      await expect.poll(async () => (await worldFiles(state)).length).toBe(2);
      await expect
        .poll(() =>
          stat(worldFile(state, 'one')).then(
            () => 'there',
            () => 'gone',
          ),
        )
        .toBe('gone');
      expect(await members(mock.baseUrl, 'one')).toEqual(['alice', 'bob', 'carol']);
    });
  });

  it('makes no world for a read, or a write that changes nothing, so new credentials never drop a written world or its file', async () => {
    const state = join(folder, 'reads');
    await withSandbox({ state, maxWorlds: 2 }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'writer-1', 'bob', 'robert')).status).toBe(204);
      expect((await renameUser(mock.baseUrl, 'writer-2', 'bob', 'bobby')).status).toBe(204);
      for (let n = 0; n < 5; n++) {
        expect(await members(mock.baseUrl, `reader-${n}`)).toEqual(['alice', 'bob', 'carol']);
        expect((await renameUser(mock.baseUrl, `reader-${n}`, 'nobody', 'somebody')).status).toBe(404);
      }
      expect((await worldFiles(state)).sort()).toEqual(
        [worldFile(state, 'writer-1'), worldFile(state, 'writer-2')].map((file) => file.slice(state.length + 1)).sort(),
      );
      expect(await members(mock.baseUrl, 'writer-1')).toEqual(['alice', 'robert', 'carol']);
      expect(await members(mock.baseUrl, 'writer-2')).toEqual(['alice', 'bobby', 'carol']);
    });
  });

  it('keeps the file of a world written again after it was dropped, so what it holds survives a restart', async () => {
    const state = join(folder, 'dropped-while-queued');
    const secret = (mock: MockServer, name: string) =>
      call(`${mock.baseUrl}/user/actions/secrets/${name}`, 'PUT', { token: 'queued', json: { data: 'x' } });
    await withSandbox({ state, maxWorlds: 1 }, async (mock) => {
      // A world of 8 MiB takes a while to save: the next write waits behind it.
      for (let n = 0; n < 4; n++)
        expect(
          (
            await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
              token: 'queued',
              json: { armored_public_key: armoredKey(1000 * KiB) },
            })
          ).status,
        ).toBe(201);
      const first = secret(mock, 'FIRST');
      await new Promise((resolve) => setTimeout(resolve, 2));
      // The second waits; another credential drops this world meanwhile; the second then writes a fresh one.
      const second = secret(mock, 'SECOND');
      await new Promise((resolve) => setTimeout(resolve, 2));
      const other = call(`${mock.baseUrl}/user/actions/secrets/OTHER`, 'PUT', { token: 'other', json: { data: 'x' } });
      expect([(await first).status, (await second).status, (await other).status]).toEqual([201, 201, 201]);
      // 204 when the other credential's write came before the second's, as meant; on a busy machine
      // it may come after, and drop the world the second wrote: this write then makes it afresh,
      // another world written again after a drop. Either way, this world is the one kept.
      expect([201, 204]).toContain((await secret(mock, 'SECOND')).status);
    });
    await withSandbox({ state, maxWorlds: 1 }, async (mock) => {
      expect((await secret(mock, 'SECOND')).status).toBe(204);
    });
  }, 30_000);
});

describe('4. markdown renders bounded, off the event loop', () => {
  const mentions = (bytes: number): string => '@alice #42 '.repeat(Math.floor(bytes / 11));

  /** CPU seconds a thread of `pid` has used (Linux: /proc/PID/task/TID/stat), or the whole process's without `tid`. */
  async function cpuSeconds(pid: number, tid?: number): Promise<number> {
    const stat = await readFile(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // `pid (name) state …`: utime and stime are the 12th and 13th fields after the name, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }

  /**
   * Two texts slow to render (16 KiB of one-cell table rows), one per worker, must render while
   * /version answers, and the CPU they take (the workers' start included) must be the workers',
   * not the main thread's, which runs the event loop: an account the kernel keeps, so the check
   * does not race the machine.
   */
  async function slowTextsHoldNothing(baseUrl: string, pid: number): Promise<void> {
    const rows = `|a|\n|-|\n${'|\n'.repeat(8188)}`;
    expect(Buffer.byteLength(rows)).toBeLessThanOrEqual(16 * KiB);
    const [mainBefore, allBefore] = [await cpuSeconds(pid, pid), await cpuSeconds(pid)];
    const renders = Promise.all(
      Array.from({ length: 2 }, () =>
        call(`${baseUrl}/markdown`, 'POST', {
          token: 'writer',
          json: { Text: rows, Mode: 'comment', Context: '/acme/rocket' },
        }),
      ),
    );
    expect((await call(`${baseUrl}/version`, 'GET', { token: 'reader' })).status).toBe(200);
    const answers = await renders;
    expect(answers.map((answer) => [answer.status, String(answer.json).length])).toEqual(Array(2).fill([200, 172_021]));
    const [main, all] = [(await cpuSeconds(pid, pid)) - mainBefore, (await cpuSeconds(pid)) - allBefore];
    expect(all).toBeGreaterThan(0.1);
    expect(main).toBeLessThan(all / 3);
  }

  it('refuses HTML past its bound (10 MiB, 2 MiB here) with 413, while /version answers at once', async () => {
    expect(MARKDOWN_LIMITS).toEqual({ maxInputBytes: 1024 * 1024, maxOutputBytes: 10 * 1024 * 1024, timeoutMs: 5_000 });
    // A time bound the render cannot reach on a busy machine: the output bound answers. A quarter of
    // the default input and a fifth of its output bound: the same refusal at a quarter of the cost,
    // and still a render that would hold /version for far longer than 250 ms on the event loop.
    await withSandbox({ markdown: { timeoutMs: 60_000, maxOutputBytes: 2 * 1024 * 1024 } }, async (mock) => {
      // 256 KiB of mentions and references is 3.2 MiB of links.
      const render = call(`${mock.baseUrl}/markdown`, 'POST', {
        token: 'writer',
        json: {
          Text: mentions(256 * 1024),
          Mode: 'comment',
          Context: '/acme/rocket',
        },
      });
      let done = false;
      void render.finally(() => {
        done = true;
      });
      let versions = 0;
      while (!done) {
        expect((await call(`${mock.baseUrl}/version`, 'GET', { token: 'reader' })).status).toBe(200);
        versions++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const answer = await render;
      expect([answer.status, answer.json.message]).toEqual([
        413,
        expect.stringMatching(
          /^the rendered HTML would be \d+ bytes, more than the 2097152 the sandbox answers; send less text$/,
        ),
      ]);
      // /version answered again and again while the render ran: on the event loop, the first would
      // have waited for the whole render. (How long each waited is bench/time-bounds.mjs's.)
      expect(versions).toBeGreaterThan(5);
      // The renderer is still there for the next text.
      const small = await call(`${mock.baseUrl}/markdown`, 'POST', {
        token: 'writer',
        json: { Text: 'hi @alice', Mode: 'comment' },
      });
      expect([small.status, small.json]).toEqual([
        200,
        `<p>hi <a href="${mock.origin}/alice" class="mention">@alice</a></p>\n`,
      ]);
    });
  }, 30_000);

  it("renders long texts in the workers: 16 KiB of one-cell rows, slow to render, take the workers' CPU, not the event loop's", async () => {
    await withSandbox({}, async (mock) => {
      await slowTextsHoldNothing(mock.baseUrl, process.pid);
    });
  });

  // How soon: bench/time-bounds.mjs.
  it('refuses text past 1 MiB at once', async () => {
    await withSandbox({}, async (mock) => {
      const text = mentions(1024 * 1024 + 11);
      const large = await call(`${mock.baseUrl}/markdown`, 'POST', { token: 'writer', json: { Text: text } });
      expect([large.status, large.json.message]).toEqual([
        413,
        `the sandbox renders at most 1048576 bytes of markdown; this text has ${text.length}`,
      ]);
    });
  });

  it('ends a render past its time bound, and renders the next text', async () => {
    // 1 MiB of table takes about 3 s to render: it is ended after 1 (how soon after: bench/time-bounds.mjs).
    await withSandbox({ markdown: { timeoutMs: 1_000 } }, async (mock) => {
      const slow = await call(`${mock.baseUrl}/markdown`, 'POST', {
        token: 'writer',
        json: {
          Text: `|a|b|\n|-|-|\n${'|x|y|\n'.repeat(174_000)}`,
        },
      });
      expect([slow.status, slow.json.message]).toEqual([
        413,
        'this text was not rendered within the 1000 ms the sandbox allows; send less text',
      ]);
      expect((await call(`${mock.baseUrl}/markdown`, 'POST', { token: 'writer', json: { Text: '# hi' } })).json).toBe(
        '<h1>hi</h1>\n',
      );
    });
  }, 30_000);

  it('renders short texts at once while long ones wait; answers 503 with Retry-After past 4 MiB waiting and to a wait past the time bound, 413 to the slow, and stays up', async () => {
    // The renderer itself, so that the order in which texts arrive is the order of the calls.
    const renderer = createMarkdownRenderer({ ...MARKDOWN_LIMITS, timeoutMs: 600 });
    const render = (text: string) =>
      renderer.render({ text, mode: 'markdown', context: undefined, origin: 'http://127.0.0.1', users: [] });
    const table = `|a|b|\n|-|-|\n${'|x|y|\n'.repeat(174_000)}`;
    try {
      // Two slow texts (1 MiB of table, about 3 s each) take both workers until the bound ends them;
      // two more wait for a worker, within the 4 MiB the queue holds; the fifth would pass it.
      const slow = Array.from({ length: 2 }, () => render(table));
      const waiting = Array.from({ length: 2 }, () => render(table));
      expect(await render(table)).toEqual({
        ok: false,
        status: 503,
        message: `the sandbox has ${4 * table.length} bytes of markdown to render before this text; try again`,
        retryAfter: 1,
      });
      // Short texts do not wait behind them: a hundred render on this thread meanwhile.
      const short = await Promise.all(Array.from({ length: 100 }, () => render('# hi')));
      expect(short).toEqual(Array(100).fill({ ok: true, html: '<h1>hi</h1>\n' }));
      expect(await Promise.all(waiting)).toEqual(
        Array(2).fill({
          ok: false,
          status: 503,
          message: 'no worker was free to render this text within 600 ms; try again',
          retryAfter: 1,
        }),
      );
      expect(await Promise.all(slow)).toEqual(
        Array(2).fill({
          ok: false,
          status: 413,
          message: 'this text was not rendered within the 600 ms the sandbox allows; send less text',
        }),
      );
      // Rendering long texts again once a worker has started anew; and Tinypool left no time-out
      // behind (its own queue's refusal once did, which crashed the process when it fired).
      await expect
        .poll(async () => await render(`# hi\n\n${'a '.repeat(2048)}`), { timeout: 5_000 })
        .toMatchObject({ ok: true });
      await new Promise((resolve) => setTimeout(resolve, 700));
    } finally {
      await renderer.close();
    }
  }, 30_000);

  it('the built bin refuses four 9 MB texts at once, renders slow texts off its event loop, and stays up', async () => {
    const mock = await startCli([]);
    const render = (text: string) =>
      call(`${mock.baseUrl}/markdown`, 'POST', {
        token: 'writer',
        json: { Text: text, Mode: 'comment', Context: '/acme/rocket' },
      });
    try {
      // Texts that would make 123 MB of HTML each and abort the process: refused before rendering.
      // The input bound's answer, which comes before any rendering (a timing would only measure the machine).
      const refused = await Promise.all(Array.from({ length: 4 }, () => render(mentions(9_300_000))));
      expect(refused.map((answer) => answer.status)).toEqual([413, 413, 413, 413]);
      for (const answer of refused)
        expect(answer.json.message).toMatch(
          /^the sandbox renders at most 1048576 bytes of markdown; this text has \d+$/,
        );
      // The bundle's worker file loads, and renders there, off the event loop.
      await slowTextsHoldNothing(mock.baseUrl, mock.child.pid!);
      expect(mock.child.exitCode).toBeNull();
    } finally {
      await mock.stop();
    }
  });
});

describe('5. a write is applied only once it is saved', () => {
  it('answers 500 with the cause when the disk refuses, and the world stays as it was', async () => {
    const state = join(folder, 'refusing');
    await withSandbox({ state }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'saver', 'bob', 'robert')).status).toBe(204);
      // The folder gives way to a file: every save fails, as root too.
      await rename(state, `${state}.moved`);
      await writeFile(state, '');
      const failed = await renameUser(mock.baseUrl, 'saver', 'carol', 'caroline');
      expect([failed.status, failed.json]).toEqual([
        500,
        { message: 'the sandbox could not save its state (ENOTDIR)', url: `${mock.origin}/api/swagger` },
      ]);
      const failedReset = await reset(mock, 'saver');
      expect([failedReset.status, failedReset.json.message]).toEqual([
        500,
        'the sandbox could not save its state (ENOTDIR)',
      ]);
      expect(await members(mock.baseUrl, 'saver')).toEqual(['alice', 'robert', 'carol']);
      // Writes that arrive together are saved together: they fail together, and none is kept.
      const secret = (name: string) =>
        call(`${mock.baseUrl}/user/actions/secrets/${name}`, 'PUT', { token: 'saver', json: { data: 'x' } });
      const together = await Promise.all(Array.from({ length: 10 }, (_, n) => secret(`T${n}`)));
      expect(together.map((answer) => answer.status)).toEqual(Array(10).fill(500));
      // The folder back, the same write is saved and shown.
      await rm(state);
      await rename(`${state}.moved`, state);
      expect((await renameUser(mock.baseUrl, 'saver', 'carol', 'caroline')).status).toBe(204);
      expect(await members(mock.baseUrl, 'saver')).toEqual(['alice', 'robert', 'caroline']);
      expect((await secret('T0')).status).toBe(201);
      expect(
        JSON.parse(await readFile(worldFile(state, 'saver'), 'utf8')).users.map(
          (user: { login: string }) => user.login,
        ),
      ).toContain('caroline');
    });
  });

  it('answers a reset in a folder that takes no change with its cause, EPERM or EACCES, and keeps the world', async () => {
    const state = join(folder, 'read-only');
    await withSandbox({ state }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'fixed', 'bob', 'robert')).status).toBe(204);
      // As root, only an immutable folder refuses (EPERM); as anyone else, a folder without write permission (EACCES).
      const root = process.getuid?.() === 0;
      if (root) await promisify(execFile)('chattr', ['+i', state]);
      else await chmod(state, 0o500);
      try {
        const refused = await reset(mock, 'fixed');
        expect([refused.status, refused.json.message]).toEqual([
          500,
          `the sandbox could not save its state (${root ? 'EPERM' : 'EACCES'})`,
        ]);
        const write = await renameUser(mock.baseUrl, 'fixed', 'carol', 'caroline');
        expect([write.status, write.json.message]).toEqual([
          500,
          `the sandbox could not save its state (${root ? 'EPERM' : 'EACCES'})`,
        ]);
      } finally {
        if (root) await promisify(execFile)('chattr', ['-i', state]);
        else await chmod(state, 0o700);
      }
      expect(await members(mock.baseUrl, 'fixed')).toEqual(['alice', 'robert', 'carol']);
    });
  });

  it('the built bin on a disk that takes no more (a file-size limit: EFBIG) answers 500 to the writes that cross it, together, and keeps every write it answered', async () => {
    const state = join(folder, 'full-disk');
    const mock = await startCli(['--state', state], 64);
    const kept: string[] = [];
    const add = async (key: string): Promise<number> => {
      const { status } = await call(`${mock.baseUrl}/user/gpg_keys`, 'POST', {
        token: 'full',
        json: { armored_public_key: key },
      });
      if (status === 201) kept.push(key);
      return status;
    };
    try {
      // Keys of 8 KiB (16 KiB in the world) until the world's file would pass 64 KiB.
      let status = 201;
      for (let n = 0; status === 201 && n < 10; n++) status = await add(armoredKey(8 * KiB));
      expect(status).toBe(500);
      // Ten at once, 2 KiB each in the world: more than the room left, so some saves fail, each
      // failing with every write saved with it.
      const statuses = await Promise.all(Array.from({ length: 10 }, () => add(armoredKey(KiB))));
      expect(statuses).toContain(500);
      expect(statuses.filter((each) => each !== 201 && each !== 500)).toEqual([]);
    } finally {
      await mock.stop();
    }
    // Every answered key is on disk: each is a duplicate now (read back in this process: the bin adds nothing to a load).
    await withSandbox({ state }, async (again) => {
      for (const key of kept)
        expect(
          (await call(`${again.baseUrl}/user/gpg_keys`, 'POST', { token: 'full', json: { armored_public_key: key } }))
            .status,
        ).toBe(422);
    });
  }, 60_000);

  it('refuses to start where the state cannot be written', async () => {
    // Taking the lock is the first write: with no room for a byte, it fails.
    const noRoom = join(folder, 'no-room');
    expect(await refusal(['--state', noRoom], 0)).toEqual({
      code: 1,
      stderr: `gitea-mock: cannot start: --state ${noRoom} cannot be written (EFBIG)\n`,
    });
    expect(await readdir(noRoom)).toEqual([]);
    // /proc takes no new folder, even from root; nor does a file. In this process: the same refusals, without a start of the bin each.
    await expect(startMockServer({ port: 0, sandbox: { state: '/proc/gitea-mock-state' } })).rejects.toThrow(
      /^--state \/proc\/gitea-mock-state cannot be created \(ENOENT\)$/,
    );
    const file = join(folder, 'a-file');
    await writeFile(file, '');
    await expect(startMockServer({ port: 0, sandbox: { state: join(file, 'state') } })).rejects.toThrow(
      `--state ${join(file, 'state')} cannot be created (ENOTDIR)`,
    );
  });
});

describe('6. one process per state folder', () => {
  it('refuses a second process naming the folder and the holder; frees the folder on exit; takes over after a kill -9', async () => {
    const state = join(folder, 'locked');
    const first = await startCli(['--state', state]);
    let second: Launched | undefined;
    try {
      const refused = await refusal(['--state', state]);
      expect(refused).toEqual({
        code: 1,
        stderr: `gitea-mock: cannot start: --state ${state} is in use by process ${first.child.pid} on ${hostname()} (its lock is ${join(state, 'lock')}); one process per state folder: stop that one, or give another folder\n`,
      });
      expect(await first.stop()).toBe(0);
      expect(await readdir(state)).not.toContain('lock');
      second = await startCli(['--state', state]);
      expect(await readFile(join(state, 'lock'), 'utf8')).toBe(`${second.child.pid} ${hostname()}\n`);
      await second.stop('SIGKILL');
      // The dead process's lock file is left behind; the kernel let its lock go.
      expect(await readFile(join(state, 'lock'), 'utf8')).toBe(`${second.child.pid} ${hostname()}\n`);
      second = await startCli(['--state', state]);
      expect((await renameUser(second.baseUrl, 'after', 'bob', 'robert')).status).toBe(204);
    } finally {
      await first.stop();
      await second?.stop();
    }
  }, 60_000);

  it('refuses a second process of the same process id in a PID namespace of its own, as two containers that are each PID 1', async () => {
    const state = join(folder, 'namespaces');
    // Each bin as PID 1 of a namespace of its own (unshare, as root).
    const contained = (): [string, string[]] => {
      const [command, args] = cli(['--state', state]);
      return ['unshare', ['--pid', '--fork', '--mount-proc', command, ...args]];
    };
    const first = await launch(...contained());
    try {
      expect(await readFile(join(state, 'lock'), 'utf8')).toBe(`1 ${hostname()}\n`);
      const second = await promisify(execFile)(...contained(), { timeout: 20_000 }).then(
        ({ stderr }) => ({ code: 0, stderr }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
      expect(second).toEqual({
        code: 1,
        stderr: `gitea-mock: cannot start: --state ${state} is in use by process 1 on ${hostname()} (its lock is ${join(state, 'lock')}); one process per state folder: stop that one, or give another folder\n`,
      });
      expect((await renameUser(first.baseUrl, 'contained', 'bob', 'robert')).status).toBe(204);
    } finally {
      await first.stop();
    }
  }, 60_000);

  it('takes over a lock file that names a live process holding no lock: a process id decides nothing', async () => {
    const state = join(folder, 'named-lock');
    await withSandbox({ state }, async () => {});
    // PID 1 runs, on this machine; it holds no lock on the file.
    await writeFile(join(state, 'lock'), '1 elsewhere\n');
    await withSandbox({ state }, async (mock) => {
      expect(await readFile(join(state, 'lock'), 'utf8')).toBe(`${process.pid} ${hostname()}\n`);
      expect((await renameUser(mock.baseUrl, 'after', 'bob', 'robert')).status).toBe(204);
    });
  });

  it('refuses a second sandbox on the same folder in one process', async () => {
    const state = join(folder, 'in-process');
    await withSandbox({ state }, async () => {
      await expect(startMockServer({ port: 0, sandbox: { state } })).rejects.toThrow(
        `--state ${state} is in use by this process already; one sandbox per state folder`,
      );
    });
  });
});

describe('7. temporaries and links', () => {
  it('removes the temporaries a killed process left, at start', async () => {
    const state = join(folder, 'temporaries');
    await withSandbox({ state }, async () => {});
    const stale = [`.${randomBytes(16).toString('hex')}.tmp`, `.${randomBytes(16).toString('hex')}.tmp`];
    for (const name of stale) await writeFile(join(state, name), '{"half": ');
    await withSandbox({ state }, async () => {
      expect((await readdir(state)).filter((name) => name.startsWith('.'))).toEqual([]);
    });
  });

  it('never writes through a link planted where the state goes, and leaves its target alone', async () => {
    const state = join(folder, 'planted');
    const victim = join(folder, 'victim.txt');
    await writeFile(victim, 'victim', { mode: 0o644 });
    await withSandbox({ state }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'planter', 'bob', 'robert')).status).toBe(204);
      // A link at the world's file, and at the names a temporary named by the pid would take.
      await rm(worldFile(state, 'planter'));
      await symlink(victim, worldFile(state, 'planter'));
      await symlink(victim, join(folder, `.planted.${process.pid}.tmp`));
      await symlink(
        victim,
        join(state, `.${createHash('sha256').update('token planter').digest('hex')}.json.${process.pid}.tmp`),
      );
      expect((await renameUser(mock.baseUrl, 'planter', 'carol', 'caroline')).status).toBe(204);
      expect(await readFile(victim, 'utf8')).toBe('victim');
      expect((await stat(victim)).mode & 0o777).toBe(0o644);
      const saved = await lstat(worldFile(state, 'planter'));
      expect([saved.isFile(), saved.mode & 0o777]).toEqual([true, 0o600]);
    });
  });

  it('follows a state path that is a link to a folder, and keeps the link', async () => {
    const real = join(folder, 'real-state');
    const linked = join(folder, 'linked-state');
    await mkdir(real);
    await symlink(real, linked);
    await withSandbox({ state: linked }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'linker', 'bob', 'robert')).status).toBe(204);
    });
    expect(await readlink(linked)).toBe(real);
    expect(await worldFiles(real)).toEqual([`${createHash('sha256').update('token linker').digest('hex')}.json`]);
  });

  it('refuses, saying why and leaving them as they are, a state path that is a link to nothing and a folder named like a temporary', async () => {
    const dangling = join(folder, 'dangling-state');
    await symlink(join(folder, 'nowhere'), dangling);
    await expect(startMockServer({ port: 0, sandbox: { state: dangling } })).rejects.toThrow(
      `--state ${dangling} is a link to ${join(folder, 'nowhere')}, which does not exist: create that folder, or give another`,
    );
    expect(await readlink(dangling)).toBe(join(folder, 'nowhere'));
    const state = join(folder, 'temporary-folder');
    await withSandbox({ state }, async () => {});
    const name = `.${randomBytes(16).toString('hex')}.tmp`;
    await mkdir(join(state, name));
    await expect(startMockServer({ port: 0, sandbox: { state } })).rejects.toThrow(
      `--state ${state} holds ${name}, a folder named like one of the sandbox's temporary files; it is left as it is: move it away, or give another folder`,
    );
    expect((await stat(join(state, name))).isDirectory()).toBe(true);
  });

  it('refuses a world file that is a link, at start', async () => {
    const state = join(folder, 'linked-world');
    await withSandbox({ state }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'linked', 'bob', 'robert')).status).toBe(204);
    });
    const file = worldFile(state, 'linked');
    await rename(file, join(folder, 'elsewhere.json'));
    await symlink(join(folder, 'elsewhere.json'), file);
    const name = file.slice(state.length + 1);
    expect(await refusal(['--state', state])).toEqual({
      code: 1,
      stderr: `gitea-mock: cannot start: --state ${state} holds ${name}, which is not a regular file but a link; it is left as it is: move it away, or give another folder\n`,
    });
  });
});

describe('8. a state folder is checked deeply at start', () => {
  let state: string;
  let name: string;
  let saved: Record<string, any>;
  beforeAll(async () => {
    state = join(folder, 'deep');
    await withSandbox({ state }, async (mock) => {
      expect((await renameUser(mock.baseUrl, 'deep', 'bob', 'robert')).status).toBe(204);
    });
    name = worldFile(state, 'deep').slice(state.length + 1);
    saved = JSON.parse(await readFile(join(state, name), 'utf8'));
  });

  // The first through the built bin (its exit code and line); the others in this process, where
  // the same check throws the same message, without a start of the bin each.
  it.each([
    [
      'no users',
      'the built bin',
      (world: Record<string, any>) => Object.assign(world, { users: [] }),
      'users is empty',
    ],
    [
      'a null record',
      'in process',
      (world: Record<string, any>) => Object.assign(world, { hooks: [null] }),
      'hooks[0] is null, not an entry',
    ],
    [
      'a null user',
      'in process',
      (world: Record<string, any>) => Object.assign(world, { users: [null, ...world.users] }),
      'users[0] is null, not a record',
    ],
    [
      'a record that breaks its schema',
      'in process',
      (world: Record<string, any>) => (world.orgLabels[0].label.color = 42),
      'orgLabels[0].label is not a Label: /color must be string',
    ],
    [
      'an entry without its repository',
      'in process',
      (world: Record<string, any>) => delete world.issues[0].repo,
      'issues[0].repo is not an id',
    ],
    // The schemas require no field: what the sandbox finds records by and answers with is required by the check.
    [
      'a user without an id',
      'in process',
      (world: Record<string, any>) => (world.users = [{}]),
      'users[0].id is missing',
    ],
    [
      'a pull request with its number only',
      'in process',
      (world: Record<string, any>) => (world.pulls[0].pull = { number: 43 }),
      'pulls[0].pull.id is missing',
    ],
    [
      'a repository without its owner',
      'in process',
      (world: Record<string, any>) => delete world.repos[0].owner,
      'repos[0].owner is missing',
    ],
    [
      'an owner without a login',
      'in process',
      (world: Record<string, any>) => delete world.repos[0].owner.login,
      'repos[0].owner is not an owner with an id and a login',
    ],
    [
      'a milestone without its title',
      'in process',
      (world: Record<string, any>) => delete world.milestones[0].milestone.title,
      'milestones[0].milestone.title is missing',
    ],
    [
      'a nextId that ids in use reach',
      'in process',
      (world: Record<string, any>) => (world.nextId = 1),
      'nextId is 1, not above the ids in use (15001, at comments[0].id)',
    ],
    // Within the world's bytes, past what any write keeps: checking them would loop or recurse as long.
    [
      "a hook's config of 100,000 keys",
      'in process',
      (world: Record<string, any>) =>
        (world.hooks[0].hook.config = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, '']))),
      'an object of it holds 100000 keys, more than the 256 of any the sandbox writes',
    ],
    [
      'a value nested 2,000 levels deep',
      'in process',
      (world: Record<string, any>) =>
        (world.hooks[0].hook.events = JSON.parse(`${'['.repeat(2000)}${']'.repeat(2000)}`)),
      'it nests deeper than the 32 levels of any world the sandbox writes',
    ],
  ])(
    'refuses a world with %s, naming the file and what is wrong, and leaves it as it is (%s)',
    async (_case, where, spoil, problem) => {
      const world = structuredClone(saved);
      spoil(world);
      const text = JSON.stringify(world);
      await writeFile(join(state, name), text);
      const message = `--state ${state} holds ${name}, which is not a world the sandbox wrote: ${problem}; it is left as it is: move it away, or give another folder`;
      if (where === 'the built bin')
        expect(await refusal(['--state', state])).toEqual({
          code: 1,
          stderr: `gitea-mock: cannot start: ${message}\n`,
        });
      else await expect(startMockServer({ port: 0, sandbox: { state } })).rejects.toThrow(message);
      expect(await readFile(join(state, name), 'utf8')).toBe(text);
      expect(await readdir(state)).not.toContain('lock');
    },
  );

  it('refuses, unread, a world file larger than a world may be: 81 MB, against the built bin on a 128 MiB heap and against 16 MiB', async () => {
    const world = structuredClone(saved);
    world.users[0].full_name = 'x'.repeat(81_000_000);
    const text = JSON.stringify(world);
    await writeFile(join(state, name), text);
    const bytes = Buffer.byteLength(text);
    const expected = (budget: number | string) =>
      `--state ${state} holds ${name}, a world of ${bytes} bytes, more than the ${budget} one may hold (--max-world-bytes); it is left as it is: move it away, or give another folder`;
    // A heap of 128 MiB (a world's share of half of it is under a MiB): reading and parsing the file would not fit.
    const smallHeap = await promisify(execFile)(
      process.execPath,
      ['--max-old-space-size=128', CLI, 'sandbox', '--state', state, '--port', '0', '--quiet'],
      { timeout: 20_000 },
    ).then(
      ({ stderr }) => ({ code: 0, stderr }),
      (error: { code: number; stderr: string }) => error,
    );
    const [, budget] = /more than the (\d+) one may hold/.exec(smallHeap.stderr) ?? [];
    expect(Number(budget)).toBeLessThan(1024 * 1024);
    expect({ code: smallHeap.code, stderr: smallHeap.stderr }).toEqual({
      code: 1,
      stderr: `gitea-mock: cannot start: ${expected(budget!)}\n`,
    });
    await expect(startMockServer({ port: 0, sandbox: { state } })).rejects.toThrow(expected(16 * 1024 * 1024));
    await writeFile(join(state, name), JSON.stringify(saved));
  });

  it('loads the world as the sandbox wrote it', async () => {
    await writeFile(join(state, name), JSON.stringify(saved));
    await withSandbox({ state }, async (mock) => {
      expect(await members(mock.baseUrl, 'deep')).toEqual(['alice', 'robert', 'carol']);
    });
  });
});
