// Types of scripts/postgres.mjs, for the suites that import it.
import type { QueryResultRow } from 'pg';

export interface TestPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/<database>` (default: postgres). */
  url(database?: string): string;
  password: string;
  port: number;
  /** Creates a database; resolves with its URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement in `database` on a connection of its own; resolves with its rows. */
  query<Row extends QueryResultRow = QueryResultRow>(
    database: string,
    text: string,
    values?: unknown[],
  ): Promise<Row[]>;
  /** Stops the server (a fast shutdown: open connections are closed), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** Starts a PostgreSQL server of its own on a free port of 127.0.0.1. */
export function startPostgres(): Promise<TestPostgres>;
