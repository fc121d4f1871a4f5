// `--state postgres://…`: the worlds in PostgreSQL, shared by every gitea-mock on the database
// (docs/sandbox-postgres.md says how and why): a row per world (gitea_mock_worlds: key, body,
// version, used_at), the versions from a sequence (gitea_mock_world_versions) so none repeats, the
// tables' version in gitea_mock_schema. A batch of writes holds its world's row (`SELECT … FOR
// UPDATE`) in the transaction that saves it, and is answered once that commits; a world with no row
// yet gets an empty one (body NULL) that readers never see. A read compares versions and fetches
// the body only when they differ. A database away or too slow is StateUnavailable (503), every
// statement is bounded in time and the pool in connections, and the sandbox recovers without a restart.
import { Buffer } from 'node:buffer';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { Refusal } from '../common/refusal.js';
import { postgresTarget, type PostgresTarget } from './postgres-url.js';
import type { World } from './world.js';
import type { WorldCheck } from './world-check.js';
import { StateUnavailable, type Backing, type Look } from './store.js';
import type { OpenOptions } from './world-store.js';

const SCHEMA_VERSION = 1;
const SCHEMA = 'gitea_mock_schema';
const WORLDS = 'gitea_mock_worlds';
const VERSIONS = 'gitea_mock_world_versions';
/** The advisory lock processes take while they create the tables, so that two starting at once do not race. */
const SCHEMA_LOCK = 0x676974656d6f;

/** Connections per process: N replicas take up to N times as many of the server's max_connections. */
export const POOL_SIZE = 10;
/** The longest a statement runs, waiting for a world's lock included; `?statement_timeout=` changes it. */
const STATEMENT_TIMEOUT_MS = 5_000;
/** The longest to open a connection, or to wait for one of the pool. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A transaction left idle this long (its process stopped or cut off) is ended, and its lock released. */
const IDLE_IN_TRANSACTION_MS = 10_000;
/** A world's use is written at most this often by reads (writes always write it). */
const TOUCH_SECONDS = 1;

/**
 * Removes the worlds beyond the $1 most recently used, across the database; a world being written
 * (its row locked) is passed over and stays.
 */
const TRIM = `DELETE FROM ${WORLDS} WHERE key IN (
  SELECT key FROM ${WORLDS} WHERE key IN (SELECT key FROM ${WORLDS} ORDER BY used_at DESC, key OFFSET $1)
  FOR UPDATE SKIP LOCKED)`;

/** SQLSTATE classes and codes that mean the database is away or busy for now, not that a statement is wrong. */
const TRANSIENT = /^(08|53|57|58)|^(40001|40P01|55P03)$/;

/** For a connection's errors that its next statement reports anyway. */
const ignore = (): void => {};

/** An error in a line: its message, and its code when the message does not say it. */
function described(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

interface Line {
  running: boolean;
  next: { resolve(look: Look): void; reject(error: unknown): void }[];
}

interface Held {
  client: PoolClient;
  /** The row was made empty by this transaction: removed unless a world is saved in it. */
  empty: boolean;
  saved: boolean;
}

export async function openPostgresState(url: string, { maxWorlds, document }: OpenOptions): Promise<Backing> {
  const target = postgresTarget(url);
  const statementTimeout = target.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  // Imported here: only a sandbox on PostgreSQL loads the driver.
  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    // The client's own bound, for a server that stops answering without closing the connection.
    query_timeout: statementTimeout + CONNECT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
    application_name: 'gitea-mock',
  });
  // An idle connection the server closed (a restart): the pool drops it and opens another when needed.
  pool.on('error', ignore);
  await createSchema(pool, target, maxWorlds).catch((error: unknown) => {
    void pool.end().catch(ignore);
    const why =
      error instanceof Refusal ? error.message : `cannot use PostgreSQL at ${target.where}: ${described(error)}`;
    throw new Error(target.redact(`--state ${target.shown}: ${why}`));
  });
  return new PostgresWorlds(pool, target, maxWorlds, document);
}

class PostgresWorlds implements Backing {
  readonly path: string;
  // None loaded at start: a world is read when a request names it.
  readonly worlds = new Map();
  private check: WorldCheck | undefined;
  private readonly holds = new Map<string, Held>();
  private readonly touching = new Set<string>();
  /** Calls of `look` waiting for the next query of a key and version, and whether one runs. */
  private readonly lines = new Map<string, Line>();

  constructor(
    private readonly pool: Pool,
    private readonly target: PostgresTarget,
    private readonly maxWorlds: number,
    private readonly document: string,
  ) {
    this.path = target.shown;
  }

  readonly shared: NonNullable<Backing['shared']> = {
    look: (key, version, held) => {
      // A query under way may have started before a write that was answered before this call: a
      // call joins the next query of its key and version, never one under way. Reads of one world
      // at once then share a query, and each still sees every write answered before it.
      const id = `${key}:${version ?? ''}`;
      let line = this.lines.get(id);
      if (!line) this.lines.set(id, (line = { running: false, next: [] }));
      const found = new Promise<Look>((resolve, reject) => line.next.push({ resolve, reject }));
      if (!line.running) void this.runLine(id, line, key, version, held);
      return found;
    },
    hold: (key, version, held, task) => this.hold(key, version, held, task),
    clear: async () => {
      await this.query(this.pool, `DELETE FROM ${WORLDS}`);
    },
  };

  async save(key: string, pieces: readonly string[]): Promise<number> {
    const held = this.holds.get(key);
    if (!held) throw new Error('a world is saved in PostgreSQL only while it is held');
    const { rows } = await this.query<{ version: string }>(
      held.client,
      `UPDATE ${WORLDS} SET body = $2, version = nextval('${VERSIONS}'), used_at = clock_timestamp()
         WHERE key = $1 RETURNING version`,
      [key, pieces.join('')],
    );
    held.saved = true;
    return Number(rows[0]!.version);
  }

  async drop(key: string): Promise<void> {
    // A reset waits for a write of another process in progress on the row; the next write finds no row.
    await this.query(this.pool, `DELETE FROM ${WORLDS} WHERE key = $1`, [key]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** The database's failure as the sandbox reports it: StateUnavailable for one away or busy for now. */
  private failed(error: unknown): Error {
    const { where } = this.target;
    const reason = this.target.redact(described(error));
    // A SQLSTATE says the server answered; anything else (ECONNREFUSED, a time-out, a closed connection) is the way to it.
    const { code } = error as { code?: unknown };
    const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    if (sqlState === undefined || TRANSIENT.test(sqlState))
      return new StateUnavailable(`the sandbox's database at ${where} is unavailable: ${reason}; try again`);
    return new Error(`the sandbox's database at ${where} refused a statement: ${reason}`);
  }

  private async query<Row extends QueryResultRow>(on: Pool | PoolClient, text: string, values: unknown[] = []) {
    try {
      return await on.query<Row>(text, values);
    } catch (error) {
      throw this.failed(error);
    }
  }

  /** A row's body as a stored world, checked as a folder's is; its records equal to those of `held` pass unchecked (WorldCheck). */
  private async stored(body: string, version: string, held: World): Promise<Look> {
    let world: unknown;
    try {
      world = JSON.parse(body);
    } catch {
      throw new Error('the world of this credential in the database is not JSON');
    }
    // Ajv and the document are loaded only when there is a world to check.
    this.check ??= (await import('./world-check.js')).createWorldCheck(this.document);
    const problem = this.check(world, held);
    if (problem !== undefined)
      throw new Error(`the world of this credential in the database is not one the sandbox wrote: ${problem}`);
    return { world: world as World, bytes: Buffer.byteLength(body), version: Number(version) };
  }

  /** Writes when a world was last read, for --max-worlds; at most every TOUCH_SECONDS, never holding up the read. */
  private touch(key: string): void {
    if (this.touching.has(key)) return;
    this.touching.add(key);
    void this.query(
      this.pool,
      `UPDATE ${WORLDS} SET used_at = clock_timestamp() WHERE key = $1 AND used_at < clock_timestamp() - make_interval(secs => $2)`,
      [key, TOUCH_SECONDS],
    )
      .catch(ignore)
      .finally(() => this.touching.delete(key));
  }

  private async runLine(id: string, line: Line, key: string, version: number | undefined, held: World) {
    line.running = true;
    while (line.next.length > 0) {
      const callers = line.next;
      line.next = [];
      const found = this.lookNow(key, version, held);
      for (const caller of callers) found.then(caller.resolve, caller.reject);
      await found.catch(ignore);
    }
    this.lines.delete(id);
  }

  private async lookNow(key: string, version: number | undefined, held: World): Promise<Look> {
    const { rows } = await this.query<{ version: string; body: string | null; idle: boolean }>(
      this.pool,
      `SELECT version, CASE WHEN version = $2 THEN NULL ELSE body END AS body,
              used_at < clock_timestamp() - make_interval(secs => $3) AS idle
         FROM ${WORLDS} WHERE key = $1 AND body IS NOT NULL`,
      [key, version ?? null, TOUCH_SECONDS],
    );
    const row = rows[0];
    if (!row) return 'none';
    if (row.idle) this.touch(key);
    return row.body === null ? 'same' : this.stored(row.body, row.version, held);
  }

  /** Locks `key`'s row, making an empty one when it has none, and says what it holds. */
  private async lock(client: PoolClient, key: string, version: number | undefined, held: World) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await this.query<{ version: string; body: string | null; empty: boolean }>(
        client,
        `SELECT version, CASE WHEN version = $2 THEN NULL ELSE body END AS body, body IS NULL AS empty
           FROM ${WORLDS} WHERE key = $1 FOR UPDATE`,
        [key, version ?? null],
      );
      const row = rows[0];
      if (row) {
        const now: Look = row.empty
          ? 'none'
          : row.body === null
            ? 'same'
            : await this.stored(row.body, row.version, held);
        return { now, empty: false };
      }
      // The row of a world written for the first time by another process commits first: then it is locked above.
      const made = await this.query(
        client,
        `INSERT INTO ${WORLDS} (key, version, used_at, body) VALUES ($1, 0, clock_timestamp(), NULL) ON CONFLICT (key) DO NOTHING`,
        [key],
      );
      if (made.rowCount === 1) return { now: 'none' as const, empty: true };
    }
    throw new StateUnavailable(
      `the sandbox's database at ${this.target.where} kept making and removing this world's row; try again`,
    );
  }

  private async hold<T>(key: string, version: number | undefined, world: World, task: (now: Look) => Promise<T>) {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failed(error);
    }
    return transaction(client, async () => {
      try {
        await this.query(client, 'BEGIN');
        const { now, empty } = await this.lock(client, key, version, world);
        const held: Held = { client, empty, saved: false };
        this.holds.set(key, held);
        const result = await task(now);
        if (held.empty && !held.saved) await this.query(client, `DELETE FROM ${WORLDS} WHERE key = $1`, [key]);
        await this.query(client, 'COMMIT');
        // A new world: beyond --max-worlds across the database, the least recently used go. On this
        // connection: one of the pool could be waited for by every hold at once. The world is kept
        // whatever the trim does.
        if (held.empty && held.saved) await this.query(client, TRIM, [this.maxWorlds]).catch(ignore);
        return result;
      } finally {
        this.holds.delete(key);
      }
    });
  }
}

/**
 * `work` on a connection of the pool, which it takes to BEGIN and COMMIT (more statements may
 * follow), rolled back when it fails. A connection the server closes meanwhile (a shutdown) reports
 * it here, and its next statement fails; unheard, the report would end the process. A connection
 * that cannot even roll back is closed, not handed to the next request.
 */
async function transaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  client.on('error', ignore);
  let healthy = true;
  try {
    return await work();
  } catch (error) {
    healthy = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    throw error;
  } finally {
    client.off('error', ignore);
    client.release(!healthy);
  }
}

/** Creates the tables on first start, under a lock; checks their version on every start; applies --max-worlds. */
async function createSchema(pool: Pool, target: PostgresTarget, maxWorlds: number): Promise<void> {
  const client = await pool.connect();
  await transaction(client, async () => {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    const { rows } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
      SCHEMA,
    ]);
    if (rows[0]?.present) {
      const found = await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}`);
      const version = found.rows[0]?.version;
      if (found.rows.length !== 1 || version !== SCHEMA_VERSION) {
        // A database this version of the sandbox cannot use as it is: the start is refused.
        throw new Refusal(
          1,
          `the database at ${target.where} holds gitea-mock tables of schema version ${version ?? 'none'}, not ${SCHEMA_VERSION}; it is left as it is: give another database, or use the gitea-mock that made them`,
        );
      }
    } else {
      await client.query(`CREATE TABLE ${SCHEMA} (version integer NOT NULL)`);
      await client.query(`INSERT INTO ${SCHEMA} (version) VALUES ($1)`, [SCHEMA_VERSION]);
      await client.query(`CREATE SEQUENCE ${VERSIONS} AS bigint START 1`);
      await client.query(
        `CREATE TABLE ${WORLDS} (
           key text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'),
           version bigint NOT NULL,
           used_at timestamptz NOT NULL,
           body text
         )`,
      );
      await client.query(`CREATE INDEX ${WORLDS}_used_at ON ${WORLDS} (used_at)`);
    }
    await client.query('COMMIT');
    // A --max-worlds lower than before takes effect at once, as with a state folder.
    await client.query(TRIM, [maxWorlds]);
  });
}
