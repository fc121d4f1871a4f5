// `--state`: a PostgreSQL URL (world-postgres.ts) or a folder of one process: `gitea-mock-sandbox.json` (its format),
// `lock` and `<sha256 of the credential>.json` per world. A save writes a temporary of a random name exclusively,
// flushes it, renames it over the world's and flushes the folder: a crash leaves the old or the new world. Files are
// their owner's only. At start the folder is locked, dead temporaries removed, every world checked (world-check.ts),
// and anything not the sandbox's refused and left as it is.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isPostgresUrl } from './postgres-url.js';
import type { Backing, OpenOptions, Stored } from './store.js';

const { lstat, mkdir, open, readdir, readFile, readlink, realpath, rename, stat, unlink, writeFile } = fs.promises;

const MARKER = 'gitea-mock-sandbox';
const MARKER_FILE = `${MARKER}.json`;
/** The folder's format (one file per world), in its marker file. */
const VERSION = 2;
const LOCK = 'lock';
const WORLD_FILE = /^([0-9a-f]{64})\.json$/;
/** A temporary (`.` and 32 random hex digits): a save in progress, or one a killed process left. */
const TEMPORARY = /^\.[0-9a-f]{32}\.(tmp|stale)$/;

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? String(error);
/** Removes a file that may be gone already; unlink, not rm: rm answers a refusal (EPERM) by trying rmdir, and reports its ENOTDIR instead. */
const remove = (file: string) =>
  unlink(file).catch((error: unknown) => {
    if (codeOf(error) !== 'ENOENT') throw error;
  });

/** Releases of the locks this process holds, by real path, run on exit too (sync: exit handlers cannot wait). */
const held = new Map<string, () => void>();
const releaseAll = (): void => {
  for (const each of held.values()) each();
};

async function writeAtomically(dir: string, name: string, pieces: readonly string[]): Promise<void> {
  const temporary = join(dir, `.${randomBytes(16).toString('hex')}.tmp`);
  // 'wx' is O_CREAT|O_EXCL: it fails on any existing path, a planted link included.
  const handle = await open(temporary, 'wx', 0o600);
  try {
    try {
      // A piece at a time: encoding a whole large world at once would hold the event loop.
      await writeFile(handle, pieces);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, join(dir, name));
  } catch (error) {
    // The cause is what failed: a temporary left behind is removed at the next start.
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await syncFolder(dir);
}

/** A rename or removal reaches the disk with its folder. */
async function syncFolder(dir: string): Promise<void> {
  const folder = await open(dir, 'r');
  // Not every platform can sync a folder; the rename is still atomic.
  await folder.sync().catch(() => {});
  await folder.close();
}

/**
 * Takes `dir/lock`, an open file description lock (fcntl F_OFD_SETLK, fs-native-extensions) the kernel drops however
 * the process ends; no process id decides (ids repeat across PID namespaces), the file names its holder for the
 * message only. The lock is on a file `dir/lock` still names: a holder removes the file as it leaves.
 */
async function takeLock(dir: string, refuse: (why: string) => never): Promise<() => void> {
  const { tryLock } = await import('fs-native-extensions');
  const path = join(dir, LOCK);
  /** `action`'s result; else, `undo` done, the folder refused for `why` and the failure's code. */
  const refusing = <T>(why: string, action: () => T, undo = (): void => {}): T => {
    try {
      return action();
    } catch (error) {
      undo();
      return refuse(`${why} (${codeOf(error)})`);
    }
  };
  // A plain descriptor: the exit handler, which cannot wait, closes it.
  const attempt = (): (() => void) | undefined => {
    // O_NOFOLLOW: never through a link planted where the lock goes.
    const flags = fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW;
    const fd = refusing('cannot be written', () => fs.openSync(path, flags, 0o600));
    let keep = false;
    try {
      if (!refusing('cannot be locked', () => tryLock(fd))) {
        const holder = /^([1-9][0-9]*) (.*)\n$/.exec(fs.readFileSync(fd, 'utf8'));
        return refuse(
          `is in use by ${holder ? `process ${holder[1]} on ${holder[2]}` : 'another process'} (its lock is ${path}); one process per state folder: stop that one, or give another folder`,
        );
      }
      // Locked a file the path no longer names (its holder removed it as it left): try again.
      const mine = fs.fstatSync(fd);
      const named = fs.lstatSync(path, { throwIfNoEntry: false });
      if (named?.ino !== mine.ino || named.dev !== mine.dev) return undefined;
      // The lock is the first write: a folder that takes none is refused, and left as it was.
      const unlink = () => fs.unlinkSync(path);
      refusing('cannot be written', () => fs.ftruncateSync(fd), unlink);
      refusing('cannot be written', () => fs.writeSync(fd, `${process.pid} ${hostname()}\n`, 0), unlink);
      keep = true;
      return () => {
        // Removed while still held, then let go (see above); gone already, or the folder is: nothing to remove.
        try {
          fs.unlinkSync(path);
        } catch {}
        fs.closeSync(fd);
      };
    } finally {
      if (!keep) fs.closeSync(fd);
    }
  };
  for (let tries = 0; tries < 5; tries++) {
    const release = attempt();
    if (release) return release;
  }
  return refuse(`has a lock (${path}) that keeps changing hands; one process per state folder`);
}

export async function openStateStore(path: string, options: OpenOptions): Promise<Backing> {
  if (isPostgresUrl(path)) return (await import('./world-postgres.js')).openPostgresState(path, options);
  const { maxWorlds, maxWorldBytes, document } = options;
  const refuse = (why: string): never => {
    throw new Error(`--state ${path} ${why}`);
  };
  const refuseLeft = (why: string): never =>
    refuse(`${why}; it is left as it is: move it away, or give another folder`);

  // A link to a folder is followed; not there (ENOTDIR: a parent is a file) is for mkdir to tell.
  const found = await stat(path).catch((error: unknown) =>
    ['ENOENT', 'ENOTDIR'].includes(codeOf(error)) ? undefined : refuse(`cannot be read (${codeOf(error)})`),
  );
  if (found === undefined) {
    // A link to nothing: mkdir would say only that the path exists (EEXIST).
    const target = await readlink(path).catch(() => undefined);
    if (target !== undefined)
      return refuse(`is a link to ${target}, which does not exist: create that folder, or give another`);
    // Its parent must exist (a recursive mkdir spins for ever on /proc in Node 20).
    await mkdir(path, { mode: 0o700 }).catch((error: unknown) => refuse(`cannot be created (${codeOf(error)})`));
  } else if (!found.isDirectory()) {
    return refuseLeft(found.isFile() ? 'is a file, not a sandbox state folder' : 'is not a folder');
  }
  const real = await realpath(path);
  if (held.has(real)) return refuse('is in use by this process already; one sandbox per state folder');

  const names = await readdir(path).catch((error: unknown) => refuse(`cannot be read (${codeOf(error)})`));
  if (names.includes(MARKER_FILE)) {
    const version = await readFile(join(path, MARKER_FILE), 'utf8')
      .then((text) => (JSON.parse(text) as Record<string, unknown> | null)?.[MARKER])
      .catch(() => undefined);
    if (version === undefined) return refuseLeft(`has a ${MARKER_FILE} that is not a gitea-mock sandbox's`);
    if (version !== VERSION)
      return refuseLeft(`is a sandbox state folder of format ${String(version)}, not ${VERSION}`);
  } else if (names.length > 0) {
    return refuseLeft(`is a folder that is not a gitea-mock sandbox state folder (it has no ${MARKER_FILE})`);
  }

  // Taking the lock is writing to the folder too: a folder that cannot be written is refused here, at start.
  const release = await takeLock(path, refuse);
  held.set(real, release);
  // Hooked with the first lock, not at import: a process that never opens a state folder gets no listener.
  if (!process.listeners('exit').includes(releaseAll)) process.on('exit', releaseAll);
  const unlock = (): void => {
    held.delete(real);
    release();
  };

  try {
    if (!names.includes(MARKER_FILE))
      await writeAtomically(path, MARKER_FILE, [`${JSON.stringify({ [MARKER]: VERSION })}\n`]);
    // Holding the lock, no save of another process is in progress: any temporary is a dead one's.
    for (const name of names.filter((name) => TEMPORARY.test(name))) {
      if ((await lstat(join(path, name))).isDirectory())
        return refuseLeft(`holds ${name}, a folder named like one of the sandbox's temporary files`);
      await remove(join(path, name)).catch((error: unknown) =>
        refuse(`cannot remove ${name}, a temporary file a stopped sandbox left (${codeOf(error)})`),
      );
    }

    const entries: { key: string; stored: Stored; time: number }[] = [];
    for (const name of names) {
      const key = WORLD_FILE.exec(name)?.[1];
      if (key === undefined) continue;
      const file = join(path, name);
      // Never through a link: a world is a file the sandbox wrote here.
      const info = await lstat(file);
      if (!info.isFile())
        return refuseLeft(`holds ${name}, which is not a regular file${info.isSymbolicLink() ? ' but a link' : ''}`);
      // Not read: the sandbox never writes a world past its budget, and reading it could take the heap.
      if (info.size > maxWorldBytes)
        return refuseLeft(
          `holds ${name}, a world of ${info.size} bytes, more than the ${maxWorldBytes} one may hold (--max-world-bytes)`,
        );
      // Ajv and the document are loaded only when there is a world to check.
      const stored = (await import('./world-check.js')).readWorld(await readFile(file, 'utf8'), document);
      if (!('world' in stored))
        return refuseLeft(
          `holds ${name}, which is not ${stored.problem ? `a world the sandbox wrote: ${stored.problem}` : 'JSON'}`,
        );
      entries.push({ key, stored, time: info.mtimeMs });
    }
    entries.sort((a, b) => a.time - b.time);
    // Beyond --max-worlds, the least recently written go, as they would have gone in memory.
    const gone = Math.max(0, entries.length - maxWorlds);
    for (const { key } of entries.slice(0, gone)) await remove(join(path, `${key}.json`));

    return {
      worlds: new Map(entries.slice(gone).map(({ key, stored }) => [key, stored])),
      save: async (key, text) => writeAtomically(path, `${key}.json`, await text()),
      async drop(key) {
        await remove(join(path, `${key}.json`));
        await syncFolder(path);
      },
      close: async () => unlock(),
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
