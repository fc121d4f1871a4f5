// `--state postgres://…`: the worlds in PostgreSQL, shared by every gitea-mock on it (docs/sandbox-postgres.md): a row
// per world, versions from a sequence so none repeats. A batch of writes holds its world's row (`SELECT … FOR UPDATE`)
// in the transaction that saves it; a world with no row yet gets an empty one (body NULL) readers never see. A row
// keeps its world's latest changes beside its body: a read fetches nothing when the versions are equal, the changes
// since the version held when they reach back to it, the body otherwise. A database away or too slow is
// StateUnavailable (503).
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { Refusal } from '../common/refusal.js';
import { postgresTarget, type PostgresTarget } from './postgres-url.js';
import { CHANGES_KEPT, StateUnavailable, type Backing, type Look, type OpenOptions, type Stored } from './store.js';

/** 2: a row keeps its world's latest changes. */
const SCHEMA_VERSION = 2;
const SCHEMA = 'gitea_mock_schema';
const WORLDS = 'gitea_mock_worlds';
const VERSIONS = 'gitea_mock_world_versions';
/** Taken while the tables are made, so that two processes starting at once do not race. */
const SCHEMA_LOCK = 0x676974656d6f;
/** Connections per process: N replicas take up to N times as many of the server's max_connections. */
const POOL_SIZE = 10;
/** The longest statement (a world's lock waited for included; `?statement_timeout=`), and wait for a connection. */
const STATEMENT_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** A transaction left idle this long (its process stopped or cut off) is ended, its lock released. */
const IDLE_IN_TRANSACTION_MS = 10_000;
/** A world's use is written by reads at most this often, in seconds (writes always write it). */
const TOUCH_SECONDS = 1;

/** Removes the worlds beyond the $1 most recently used, across the database; a world being written (its row locked) stays. */
const TRIM = `DELETE FROM ${WORLDS} WHERE key IN (
  SELECT key FROM ${WORLDS} WHERE key IN (SELECT key FROM ${WORLDS} ORDER BY used_at DESC, key OFFSET $1)
  FOR UPDATE SKIP LOCKED)`;
/**
 * A row's changes, kept beside its body: `changes[i]` takes the world from version `change_from[i]` to the next; the
 * last ends at `changes_end`, which is the row's version while the chain is intact. The body is the world at
 * `body_version`, a version of the chain: a save appends its change and rewrites the body only every
 * CHANGES_KEPT changes, so most saves write a few hundred bytes, not the world.
 */
/** The row's own columns named: in a save, `version` could be next's too. */
const INTACT = `${WORLDS}.changes_end = ${WORLDS}.version`;
/** A world's row asked against the version held (`held`, NULL for none): nothing new at `held`; the changes since it
 * where chained; else the body and the changes since it. */
function rowColumns(held: string): string {
  const follows = `(${held} = ANY(change_from) AND ${INTACT})`;
  return `${WORLDS}.key, ${WORLDS}.version,
    CASE WHEN ${WORLDS}.version = ${held} OR ${follows} THEN NULL ELSE body END AS body,
    CASE WHEN ${WORLDS}.version = ${held} THEN NULL WHEN ${follows} THEN changes[array_position(change_from, ${held}):]
      WHEN ${INTACT} THEN changes[array_position(change_from, body_version):] END AS changes,
    CASE WHEN ${INTACT} THEN cardinality(change_from) + 1
      - coalesce(array_position(change_from, body_version), cardinality(change_from) + 1) END AS pending,
    body IS NULL AS empty, used_at < clock_timestamp() - make_interval(secs => ${TOUCH_SECONDS}) AS idle`;
}
/** The row of world $1 against version $2 (NULL: none held). */
const ROW = `SELECT ${rowColumns('$2')} FROM ${WORLDS} WHERE key = $1`;
/** The rows of several worlds, each against the version its asker holds: the statement and its values. */
function rowsOf(asked: readonly { key: string; version: number | undefined; held: Stored }[]) {
  const list = asked.map((_, i) => `($${2 * i + 1}, $${2 * i + 2}::bigint)`).join(', ');
  return {
    text: `SELECT ${rowColumns('asked.held')} FROM (VALUES ${list}) AS asked (key, held)
    JOIN ${WORLDS} ON ${WORLDS}.key = asked.key`,
    values: asked.flatMap(({ key, version }) => [key, version ?? null]),
  };
}
/** `pending`: changes since the body (null: the chain is broken, the next save writes the body); `empty`: a first write is making it. */
type Row = {
  key: string;
  version: string;
  body: string | null;
  changes: string[] | null;
  pending: number | null;
  empty: boolean;
  idle: boolean;
};
/** The chain's last entries, `added` after them: enough to reach back past the body. */
const chained = (column: string, added: string) =>
  `${column}[greatest(cardinality(${column}) - ${2 * CHANGES_KEPT - 2}, 1):] || ${added}`;
const NEXT = `WITH next AS (SELECT nextval('${VERSIONS}') AS version)`;
/** The world's text ($2) as its body, and its change from the version it replaces ($3; none: the chain starts afresh). */
const SAVE = `${NEXT} UPDATE ${WORLDS} SET body = $2, body_version = next.version, version = next.version,
    used_at = clock_timestamp(),
    change_from = CASE WHEN $3::text IS NULL THEN '{}' WHEN ${INTACT}
      THEN ${chained('change_from', `${WORLDS}.version`)} ELSE ARRAY[${WORLDS}.version] END,
    changes = CASE WHEN $3::text IS NULL THEN '{}' WHEN ${INTACT}
      THEN ${chained('changes', '$3::text')} ELSE ARRAY[$3::text] END,
    changes_end = CASE WHEN $3::text IS NULL THEN NULL ELSE next.version END
  FROM next WHERE key = $1 RETURNING next.version`;
/** Only the change ($2) appended, the body kept: for a row whose chain is intact. */
const APPEND = `${NEXT} UPDATE ${WORLDS} SET version = next.version, used_at = clock_timestamp(),
    change_from = ${chained('change_from', `${WORLDS}.version`)}, changes = ${chained('changes', '$2::text')},
    changes_end = next.version
  FROM next WHERE key = $1 RETURNING next.version`;
const MAKE = `INSERT INTO ${WORLDS} (key, version, used_at, body) VALUES ($1, 0, clock_timestamp(), NULL)
  ON CONFLICT (key) DO NOTHING`;
const TOUCH = `UPDATE ${WORLDS} SET used_at = clock_timestamp()
  WHERE key = $1 AND used_at < clock_timestamp() - make_interval(secs => ${TOUCH_SECONDS})`;
const DROP = `DELETE FROM ${WORLDS} WHERE key = $1`;
/** Whether a save appends its change and keeps the body: a change, on a chain that is intact and not yet CHANGES_KEPT long. */
const appends = (change: string | undefined, pending: number | null): change is string =>
  change !== undefined && pending !== null && pending < CHANGES_KEPT;

/** SQLSTATE classes and codes that mean the database is away or busy for now, not that a statement is wrong. */
const TRANSIENT = /^(08|53|57|58)|^(40001|40P01|55P03)$/;

/** For errors reported elsewhere anyway (a connection's, by its next statement). */
const ignore = (): void => {};

function described(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

/** A statement's value, to be written into its text. */
type Value = string | number | boolean | null;

/**
 * `text` with its parameters written in as literals (node-postgres's escapeLiteral for a text), so that it goes with
 * another statement in one round trip: a query of several statements takes no parameters. A write pays two round
 * trips, not four (BEGIN and its lock together, its save and COMMIT together).
 */
function withValues(text: string, values: readonly Value[], escapeLiteral: (text: string) => string): string {
  return text.replace(/\$([1-9][0-9]*)/g, (_, n: string) => {
    const value = values[Number(n) - 1];
    if (value === undefined) throw new Error(`a statement names $${n}, which it is not given`);
    if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new Error(`${value} is not an integer`);
    return value === null ? 'NULL' : typeof value === 'string' ? escapeLiteral(value) : String(value);
  });
}

export async function openPostgresState(url: string, { maxWorlds, document }: OpenOptions): Promise<Backing> {
  const target = postgresTarget(url);
  const statementTimeout = target.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    // For a server that stops answering without closing the connection.
    query_timeout: statementTimeout + CONNECT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
    application_name: 'gitea-mock',
  });
  // An idle connection the server closed (a restart): the pool opens another when needed.
  pool.on('error', ignore);
  await createSchema(pool, target, maxWorlds).catch((error: unknown) => {
    void pool.end().catch(ignore);
    const why =
      error instanceof Refusal ? error.message : `cannot use PostgreSQL at ${target.where}: ${described(error)}`;
    throw new Error(target.redact(`--state ${target.shown}: ${why}`));
  });

  /** A statement on `pool` or a client of it, its failure as failed() says it. */
  async function query<R extends QueryResultRow>(on: Pool | PoolClient, text: string, values: unknown[] = []) {
    try {
      return await on.query<R>(text, values);
    } catch (error) {
      throw failed(target, error);
    }
  }
  /** Statements in one round trip on `client`, their values written in: the result of each. */
  async function inOneTrip(client: PoolClient, ...statements: [string, Value[]][]): Promise<QueryResult[]> {
    const text = statements.map(([statement, values]) => withValues(statement, values, pg.escapeLiteral)).join('; ');
    const results = (await query(client, text)) as QueryResult | QueryResult[];
    return Array.isArray(results) ? results : [results];
  }
  const touching = new Set<string>();
  /** Writes when a world was last read (for --max-worlds), never holding up the read. */
  function touch(key: string): void {
    if (touching.has(key)) return;
    touching.add(key);
    void query(pool, TOUCH, [key])
      .catch(ignore)
      .finally(() => touching.delete(key));
  }
  /** Begins the transaction that holds `key`'s row, made empty when there is none. */
  async function lock(client: PoolClient, key: string, version: number | undefined, held: Stored) {
    const values = [key, version ?? null];
    const [, first] = await inOneTrip(client, ['BEGIN', []], [`${ROW} FOR UPDATE`, values]);
    let row = first?.rows[0] as Row | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (row) return { now: await lookOf(row, held, document), empty: false, pending: row.pending };
      if ((await query(client, MAKE, [key])).rowCount === 1)
        return { now: 'none' as const, empty: true, pending: null };
      // Another process's first write of the world committed first: its row is locked now.
      row = (await query<Row>(client, `${ROW} FOR UPDATE`, values)).rows[0];
    }
    throw new StateUnavailable(
      503,
      `the sandbox's database at ${target.where} kept making and removing this world's row; try again`,
    );
  }
  /** Rows held by a write alone: `empty` when its transaction made it, removed unless a world is saved in it; `committed` by its save. */
  type Alone = { client: PoolClient; empty: boolean; pending: number | null; saved: boolean; committed: boolean };
  /** Rows held by a write here, alone or in a transaction of several. */
  const holds = new Map<string, Alone | { member: Member }>();
  const connect = () => pool.connect().catch((error: unknown) => Promise.reject(failed(target, error)));

  const { look, join } = together({ pool, connect, query, inOneTrip, touch, document });

  /** `task` holding `key`'s row in a transaction of its own, which makes the row when there is none. */
  function holdAlone<T>(key: string, version: number | undefined, world: Stored, task: (now: Look) => Promise<T>) {
    return transaction(connect(), async (client) => {
      try {
        const { now, empty, pending } = await lock(client, key, version, world);
        const held = { client, empty, pending, saved: false, committed: false };
        holds.set(key, held);
        const result = await task(now);
        if (held.empty && !held.saved) await query(client, DROP, [key]);
        if (!held.committed) await query(client, 'COMMIT');
        // A new world: beyond --max-worlds the least recently used go, on this connection (one of the
        // pool could be waited for by every hold at once); the world is kept whatever the trim does.
        if (held.empty && held.saved) await query(client, TRIM, [maxWorlds]).catch(ignore);
        return result;
      } finally {
        holds.delete(key);
      }
    });
  }
  return {
    async save(key, text, change) {
      const held = holds.get(key);
      if (!held) throw new Error('a world is saved in PostgreSQL only while it is held');
      if ('member' in held) {
        const { member } = held;
        member.save = { text, change, saved: deferred() };
        member.ready.resolve();
        return member.save.saved.promise;
      }
      let rows: { version: string }[];
      if (appends(change, held.pending)) {
        // The save is the transaction's last statement: COMMIT goes with it.
        const [appended] = await inOneTrip(held.client, [APPEND, [key, change]], ['COMMIT', []]);
        held.committed = true;
        rows = appended!.rows as typeof rows;
      } else {
        // A body as a parameter: written in, a large world would be copied once more.
        ({ rows } = await query<{ version: string }>(held.client, SAVE, [
          key,
          (await text()).join(''),
          change ?? null,
        ]));
      }
      held.saved = true;
      return Number(rows[0]!.version);
    },
    async drop(key) {
      // A reset waits for another process's write on the row; the next write finds none.
      await query(pool, DROP, [key]);
    },
    close: () => pool.end(),
    shared: {
      look,
      async hold(key, version, world, task) {
        const member = join(key, version, world);
        const begun = await member.begun.promise;
        if (begun === 'absent') return holdAlone(key, version, world, task);
        holds.set(key, { member });
        let result: Awaited<ReturnType<typeof task>>;
        try {
          result = await task(begun);
        } catch (error) {
          member.ready.resolve();
          await member.ended.promise.catch(ignore);
          throw error;
        } finally {
          holds.delete(key);
        }
        member.ready.resolve();
        // Kept once the transaction of them all commits.
        await member.ended.promise;
        return result;
      },
      clear: async () => {
        await query(pool, `DELETE FROM ${WORLDS}`);
      },
    },
  };
}

/** A promise with its settling functions (Promise.withResolvers, which Node 20 lacks). */
type Deferred<T> = { promise: Promise<T>; resolve(value: T | Promise<T>): void; reject(error: unknown): void };
function deferred<T = void>(): Deferred<T> {
  let settle!: Pick<Deferred<T>, 'resolve' | 'reject'>;
  const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  // Settled for those that wait; one nobody waits for is not an unhandled rejection.
  promise.catch(ignore);
  return { promise, ...settle };
}

/** Transactions of several writes, and queries of several reads, under way at once; at most this many worlds in one. */
const IN_FLIGHT = 2;
const MOST_TOGETHER = 64;
/**
 * The most bytes of worlds, as held, whose writes share a transaction: their batches apply one after another while
 * it waits, and a transaction idle for IDLE_IN_TRANSACTION_MS is ended. Larger worlds go one to a transaction.
 */
const BYTES_TOGETHER = 4 * 1024 * 1024;

/** A read waiting for the next query of several. */
type Asked = { key: string; version: number | undefined; held: Stored; found: Deferred<Look> };
/** A write waiting for the next transaction of several: begun with its row's look ('absent': none), `ready` when its task ends or saves, `ended` with the transaction. */
type Member = {
  key: string;
  version: number | undefined;
  held: Stored;
  pending: number | null;
  begun: Deferred<Look | 'absent'>;
  ready: Deferred<void>;
  ended: Deferred<void>;
  /** What its task saves, and the version it was saved as. */
  save?: {
    text: () => Promise<readonly string[]>;
    change: string | undefined;
    saved: Deferred<number>;
    version?: number;
  };
};

/**
 * Gathers what is asked while `limit` runs are under way into the next run of at most `most`, whose `weight`s
 * together stay within `budget` (one alone is always taken), one per id (asked again, the one waiting is answered):
 * under load a round trip serves many, and alone it goes at once. `run` settles its items and never rejects.
 */
function gatherer<T>(
  limit: number,
  most: number,
  run: (batch: T[]) => Promise<void>,
  weight: (item: T) => number = () => 0,
  budget = Infinity,
) {
  const next = new Map<string, T>();
  let running = 0;
  const start = (): void => {
    while (running < limit && next.size > 0) {
      const batch: T[] = [];
      let weighed = 0;
      for (const [id, item] of next) {
        weighed += weight(item);
        if (batch.length === most || (batch.length > 0 && weighed > budget)) break;
        batch.push(item);
        next.delete(id);
      }
      running++;
      void run(batch).finally(() => {
        running--;
        start();
      });
    }
  };
  return (id: string, make: () => T): T => {
    let item = next.get(id);
    if (!item) {
      next.set(id, (item = make()));
      // What is asked in the same turn goes together.
      queueMicrotask(start);
    }
    return item;
  };
}

/** What reads and writes of several worlds at once need of an opened database. */
type Db = {
  pool: Pool;
  connect(): Promise<PoolClient>;
  query<R extends QueryResultRow>(on: Pool | PoolClient, text: string, values?: unknown[]): Promise<QueryResult<R>>;
  inOneTrip(client: PoolClient, ...statements: [string, Value[]][]): Promise<QueryResult[]>;
  /** Writes when a world was last read. */
  touch(key: string): void;
  document: string | undefined;
};

/** Reads of several worlds in one query, and writes to several in one transaction (docs/sandbox-postgres.md). */
function together({ pool, connect, query, inOneTrip, touch, document }: Db) {
  /** Names each write's place in a transaction of several. */
  let writes = 0;
  /**
   * Writes to several worlds in one transaction: their rows locked in one trip, their saves and COMMIT in another.
   * `skipLocked`: the rows another transaction holds are left to a transaction that waits for them, so that two
   * processes writing the same worlds work on different ones at once.
   */
  async function holdTogether(members: Member[], skipLocked: boolean): Promise<void> {
    /** Those left to a transaction that waits: they are that one's. */
    const moved = new Set<Member>();
    const together = transaction(connect(), async (client) => {
      const { text, values } = rowsOf(members);
      // In the order of their keys, as every process locks them: two transactions never wait for each other.
      const locking = `${text} ORDER BY ${WORLDS}.key FOR UPDATE OF ${WORLDS}${skipLocked ? ' SKIP LOCKED' : ''}`;
      const [, locked] = await inOneTrip(client, ['BEGIN', []], [locking, values]);
      const rows = new Map((locked!.rows as Row[]).map((row) => [row.key, row]));
      const held: Member[] = [];
      for (const member of members) {
        const row = rows.get(member.key);
        if (!row && skipLocked) moved.add(waitForWrites(`${writes++}`, () => member));
        // No row yet: made by a write alone (a first write may race another process's).
        else if (!row) member.begun.resolve('absent');
        else
          await lookOf(row, member.held, document).then((now) => {
            member.pending = row.pending;
            member.begun.resolve(now);
            held.push(member);
          }, member.begun.reject);
      }
      await Promise.all(held.map((member) => member.ready.promise));
      const appended: Member[] = [];
      for (const member of held) {
        const { key, save, pending } = member;
        if (!save) continue;
        if (appends(save.change, pending)) appended.push(member);
        // A body as a parameter: written in, a large world would be copied once more.
        else {
          const { rows } = await query<{ version: string }>(client, SAVE, [
            key,
            (await save.text()).join(''),
            save.change ?? null,
          ]);
          save.version = Number(rows[0]!.version);
        }
      }
      const results = await inOneTrip(
        client,
        ...appended.map(({ key, save }): [string, Value[]] => [APPEND, [key, save!.change!]]),
        ['COMMIT', []],
      );
      for (const [i, { save }] of appended.entries()) save!.version = Number(results[i]!.rows[0].version);
      for (const { save } of held) save?.saved.resolve(save.version!);
    });
    const own = () => members.filter((member) => !moved.has(member));
    await together.catch((error: unknown) => {
      for (const member of own()) {
        member.begun.reject(error);
        member.save?.saved.reject(error);
      }
    });
    for (const member of own()) member.ended.resolve(together);
  }
  /** The transactions of several writes, weighed by their worlds' bytes as held. */
  const writesTogether = (skipLocked: boolean) =>
    gatherer(
      IN_FLIGHT,
      MOST_TOGETHER,
      (all: Member[]) => holdTogether(all, skipLocked),
      (member) => member.held.bytes,
      BYTES_TOGETHER,
    );
  const joinWrites = writesTogether(true);
  const waitForWrites = writesTogether(false);
  const joinReads = gatherer(IN_FLIGHT, MOST_TOGETHER, async (asked: Asked[]) => {
    const { text, values } = rowsOf(asked);
    await query<Row>(pool, text, values).then(
      ({ rows }) => {
        const byKey = new Map(rows.map((row) => [row.key, row]));
        for (const { key, held, found } of asked) {
          const row = byKey.get(key);
          if (row?.idle && !row.empty) touch(key);
          found.resolve(lookOf(row, held, document));
        }
      },
      (error: unknown) => {
        for (const { found } of asked) found.reject(error);
      },
    );
  });
  return {
    /** The world of `key` now against `held` (of `version`), from the next query of several. */
    look: (key: string, version: number | undefined, held: Stored): Promise<Look> =>
      // A call joins the next query, never one under way (it may have started before a write answered
      // before this call): reads at once share a query, and see every write.
      joinReads(`${key}:${version ?? ''}`, () => ({ key, version, held, found: deferred<Look>() })).found.promise,
    /** A write's place in the next transaction of several: one hold of a key at a time here (the store's order). */
    join: (key: string, version: number | undefined, held: Stored): Member =>
      joinWrites(`${writes++}`, () => ({
        key,
        version,
        held,
        pending: null,
        begun: deferred(),
        ready: deferred(),
        ended: deferred(),
      })),
  };
}

/** A row as a Look: `held` changed, or its body (with its parts) and the changes after it, checked as a folder's world is. */
async function lookOf(row: Row | undefined, held: Stored, document: string | undefined): Promise<Look> {
  if (!row || row.empty) return 'none';
  if (row.body === null && row.changes === null) return 'same';
  const { readChanges, readWorld } = await import('./world-check.js');
  let stored: ReturnType<typeof readChanges> = held;
  if (row.body !== null) stored = readWorld(row.body, document, held.world);
  if ('world' in stored && row.changes !== null) stored = readChanges(stored, row.changes, document);
  if (!('world' in stored))
    throw new Error(
      `the world of this credential in the database is not ${stored.problem ? `one the sandbox wrote: ${stored.problem}` : 'JSON'}`,
    );
  return { ...stored, version: Number(row.version) };
}

/** The database's failure: StateUnavailable unless a SQLSTATE says the server answered, and not that it is busy. */
function failed({ redact, where }: PostgresTarget, error: unknown): Error {
  const reason = redact(described(error));
  const { code } = error as { code?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || TRANSIENT.test(code))
    return new StateUnavailable(503, `the sandbox's database at ${where} is unavailable: ${reason}; try again`);
  return new Error(`the sandbox's database at ${where} refused a statement: ${reason}`);
}

// `work` on a connection of the pool, rolled back when it fails; a connection that cannot even roll back is closed.
// The server closing it meanwhile is reported here (unheard, it would end the process).
async function transaction<T>(connected: Promise<PoolClient>, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await connected;
  client.on('error', ignore);
  let healthy = true;
  try {
    return await work(client);
  } catch (error) {
    healthy = await client
      .query('ROLLBACK')
      .then(() => true)
      .catch(() => false);
    throw error;
  } finally {
    client.off('error', ignore);
    client.release(!healthy);
  }
}

async function createSchema(pool: Pool, target: PostgresTarget, maxWorlds: number): Promise<void> {
  await transaction(pool.connect(), async (client) => {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    const { rows } = await client.query(`SELECT to_regclass('${SCHEMA}') IS NOT NULL AS present`);
    if (rows[0]?.present) {
      const found = await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}`);
      const version = found.rows[0]?.version;
      if (found.rows.length !== 1 || version !== SCHEMA_VERSION) {
        throw new Refusal(
          1,
          `the database at ${target.where} holds gitea-mock tables of schema version ${version ?? 'none'}, not ${SCHEMA_VERSION}; it is left as it is: give another database, or use the gitea-mock that made them`,
        );
      }
    } else {
      await client.query(`CREATE TABLE ${SCHEMA} (version integer NOT NULL);
        INSERT INTO ${SCHEMA} (version) VALUES (${SCHEMA_VERSION});
        CREATE SEQUENCE ${VERSIONS} AS bigint START 1;
        CREATE TABLE ${WORLDS} (key text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'), version bigint NOT NULL,
          used_at timestamptz NOT NULL, body text, body_version bigint, change_from bigint[] NOT NULL DEFAULT '{}',
          changes text[] NOT NULL DEFAULT '{}', changes_end bigint);
        CREATE INDEX ${WORLDS}_used_at ON ${WORLDS} (used_at)`);
    }
    await client.query('COMMIT');
    // A --max-worlds lower than before takes effect at once, as with a state folder.
    await client.query(TRIM, [maxWorlds]);
  });
}
