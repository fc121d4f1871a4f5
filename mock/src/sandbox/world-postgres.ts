// `--state postgres://…`: the worlds in PostgreSQL, shared by every gitea-mock on it (docs/sandbox-postgres.md): a row
// per world, versions from a sequence so none repeats. A batch of writes holds its world's row (`SELECT … FOR UPDATE`)
// in the transaction that saves it; a world with no row yet gets an empty one (body NULL) readers never see. A read
// fetches the body only when the versions differ. A database away or too slow is StateUnavailable (503).
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { Refusal } from '../common/refusal.js';
import { postgresTarget, type PostgresTarget } from './postgres-url.js';
import type { World } from './world.js';
import { StateUnavailable, type Backing, type Look, type OpenOptions } from './store.js';

const SCHEMA_VERSION = 1;
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
/** A world's row, its body only when its version is not $2; an empty row is one a first write is making. */
const ROW = `SELECT version, CASE WHEN version = $2 THEN NULL ELSE body END AS body, body IS NULL AS empty,
    used_at < clock_timestamp() - make_interval(secs => ${TOUCH_SECONDS}) AS idle
  FROM ${WORLDS} WHERE key = $1`;
type Row = { version: string; body: string | null; empty: boolean; idle: boolean };
const SAVE = `UPDATE ${WORLDS} SET body = $2, version = nextval('${VERSIONS}'), used_at = clock_timestamp()
  WHERE key = $1 RETURNING version`;
const MAKE = `INSERT INTO ${WORLDS} (key, version, used_at, body) VALUES ($1, 0, clock_timestamp(), NULL)
  ON CONFLICT (key) DO NOTHING`;
const TOUCH = `UPDATE ${WORLDS} SET used_at = clock_timestamp()
  WHERE key = $1 AND used_at < clock_timestamp() - make_interval(secs => ${TOUCH_SECONDS})`;
const DROP = `DELETE FROM ${WORLDS} WHERE key = $1`;

/** SQLSTATE classes and codes that mean the database is away or busy for now, not that a statement is wrong. */
const TRANSIENT = /^(08|53|57|58)|^(40001|40P01|55P03)$/;

/** For errors reported elsewhere anyway (a connection's, by its next statement). */
const ignore = (): void => {};

function described(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
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
  /** A row as a Look, its body checked as a folder's world is (records equal to those of `held` unchecked). */
  async function lookOf(row: Row | undefined, held: World): Promise<Look> {
    if (!row || row.empty) return 'none';
    if (row.body === null) return 'same';
    const stored = (await import('./world-check.js')).readWorld(row.body, document, held);
    if (!('world' in stored))
      throw new Error(
        `the world of this credential in the database is not ${stored.problem ? `one the sandbox wrote: ${stored.problem}` : 'JSON'}`,
      );
    return { ...stored, version: Number(row.version) };
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
  async function lock(client: PoolClient, key: string, version: number | undefined, held: World) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = (await query<Row>(client, `${ROW} FOR UPDATE`, [key, version ?? null])).rows[0];
      if (row) return { now: await lookOf(row, held), empty: false };
      // Another process's first write of the world commits first: its row is then locked above.
      if ((await query(client, MAKE, [key])).rowCount === 1) return { now: 'none' as const, empty: true };
    }
    throw new StateUnavailable(
      503,
      `the sandbox's database at ${target.where} kept making and removing this world's row; try again`,
    );
  }
  /** Rows held by a write here: `empty` when its transaction made it, removed unless a world is saved in it. */
  const holds = new Map<string, { client: PoolClient; empty: boolean; saved: boolean }>();
  /** Calls of `look` waiting for the next query of a key and version, while one runs. */
  const lines = new Map<string, ((looked: Promise<Look>) => void)[]>();
  return {
    async save(key, pieces) {
      const held = holds.get(key);
      if (!held) throw new Error('a world is saved in PostgreSQL only while it is held');
      const { rows } = await query<{ version: string }>(held.client, SAVE, [key, pieces.join('')]);
      held.saved = true;
      return Number(rows[0]!.version);
    },
    async drop(key) {
      // A reset waits for another process's write on the row; the next write finds none.
      await query(pool, DROP, [key]);
    },
    close: () => pool.end(),
    shared: {
      look(key, version, held) {
        // A call joins the next query of its key and version, never one under way (it may have started
        // before a write answered before this call): reads at once share a query, and see every write.
        const id = `${key}:${version ?? ''}`;
        const line = lines.get(id) ?? [];
        const found = new Promise<Look>((resolve) => line.push(resolve));
        if (!lines.has(id)) {
          lines.set(id, line);
          void (async () => {
            while (line.length > 0) {
              const looked = query<Row>(pool, ROW, [key, version ?? null]).then(({ rows: [row] }) => {
                if (row?.idle && !row.empty) touch(key);
                return lookOf(row, held);
              });
              for (const resolve of line.splice(0)) resolve(looked);
              await looked.catch(ignore);
            }
            lines.delete(id);
          })();
        }
        return found;
      },
      async hold(key, version, world, task) {
        const connected = pool.connect().catch((error: unknown) => Promise.reject(failed(target, error)));
        return transaction(connected, async (client) => {
          try {
            await query(client, 'BEGIN');
            const { now, empty } = await lock(client, key, version, world);
            const held = { client, empty, saved: false };
            holds.set(key, held);
            const result = await task(now);
            if (held.empty && !held.saved) await query(client, DROP, [key]);
            await query(client, 'COMMIT');
            // A new world: beyond --max-worlds the least recently used go, on this connection (one of the
            // pool could be waited for by every hold at once); the world is kept whatever the trim does.
            if (held.empty && held.saved) await query(client, TRIM, [maxWorlds]).catch(ignore);
            return result;
          } finally {
            holds.delete(key);
          }
        });
      },
      clear: async () => {
        await query(pool, `DELETE FROM ${WORLDS}`);
      },
    },
  };
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
          used_at timestamptz NOT NULL, body text);
        CREATE INDEX ${WORLDS}_used_at ON ${WORLDS} (used_at)`);
    }
    await client.query('COMMIT');
    // A --max-worlds lower than before takes effect at once, as with a state folder.
    await client.query(TRIM, [maxWorlds]);
  });
}
