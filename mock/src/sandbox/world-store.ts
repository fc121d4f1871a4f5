// `--state DIR`: the worlds in a folder, one file per world: `gitea-mock-sandbox.json` (the
// folder's format), `lock` (held by the one process that uses it) and `<sha256>.json` (a world,
// named by its credential's hash). A save writes a temporary file of a random name (created
// exclusively, never through a link), flushes it, renames it over the world's and flushes the
// folder: a crash leaves the old or the new world, never a broken one. Files are their owner's
// only. At start the folder is locked, dead temporaries removed and every world checked deeply
// (world-check.ts); anything that is not the sandbox's is refused and left as it is.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, readlink, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Backing, Stored } from './store.js';
import type { World } from './world.js';
import type { WorldCheck } from './world-check.js';

const MARKER = 'gitea-mock-sandbox';
const MARKER_FILE = `${MARKER}.json`;
/** The format of a state folder (one file per world), in its marker file. */
const VERSION = 2;
const LOCK = 'lock';
const WORLD_FILE = /^([0-9a-f]{64})\.json$/;
/** A temporary (`.` and 32 random hex digits): a save in progress, or one a killed process left. */
const TEMPORARY = /^\.[0-9a-f]{32}\.(tmp|stale)$/;

export interface OpenOptions {
  /** Worlds kept: beyond it, the least recently written are removed at start. */
  maxWorlds: number;
  /** Bytes one world may hold (sandbox-limits.ts' worldBudget): a larger world file is refused, unread. */
  maxWorldBytes: number;
  /** The openapi.yaml whose schemas the records must match. */
  document: string;
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? String(error);

/** Folders this process has open: the lock tells other processes, this set tells the process itself. */
const openHere = new Set<string>();
/** Releases of the locks this process holds, run on exit too (the sync API: exit handlers cannot wait). */
const releases = new Set<() => void>();
let exitHook = false;

/** Writes the pieces of text as `dir/name`, atomically and durably (see the top of this file). */
async function writeAtomically(dir: string, name: string, pieces: readonly string[]): Promise<void> {
  const temporary = join(dir, `.${randomBytes(16).toString('hex')}.tmp`);
  // 'wx' is O_CREAT|O_EXCL: it fails on any existing path, a planted link included.
  const handle = await open(temporary, 'wx', 0o600);
  try {
    try {
      // A piece at a time: encoding a whole large world at once would hold the event loop.
      for (const piece of pieces) {
        const bytes = Buffer.from(piece);
        for (let written = 0; written < bytes.length; ) written += (await handle.write(bytes, written)).bytesWritten;
      }
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
  try {
    await folder.sync();
  } catch {
    // Not every platform can sync a folder; the rename is still atomic.
  } finally {
    await folder.close();
  }
}

/**
 * Takes `dir/lock`: an exclusive lock the kernel holds on the open file (an open file description
 * lock, fcntl F_OFD_SETLK, through fs-native-extensions) for as long as this process keeps it open,
 * and drops when the process ends, however it ends (a kill -9 too). No process id decides anything:
 * ids repeat across PID namespaces, as in two containers that are each PID 1. The file names its
 * holder, for the refusal's message only. The lock is on a file that `dir/lock` still names, so a
 * holder that removes the file as it leaves cannot leave a lock on a file no one else would open.
 */
async function takeLock(dir: string, refuse: (why: string) => never): Promise<() => void> {
  const { tryLock } = await import('fs-native-extensions');
  const path = join(dir, LOCK);
  // A plain descriptor, not a FileHandle: it is closed by the exit handler, which cannot wait.
  const attempt = (): (() => void) | undefined => {
    let fd: number;
    try {
      // O_NOFOLLOW: never through a link planted where the lock goes.
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      return refuse(`cannot be written (${codeOf(error)})`);
    }
    let keep = false;
    try {
      let locked: boolean;
      try {
        locked = tryLock(fd);
      } catch (error) {
        return refuse(`cannot be locked (${codeOf(error)})`);
      }
      if (!locked) {
        const holder = /^([1-9][0-9]*) (.*)\n$/.exec(readFileSync(fd, 'utf8'));
        return refuse(
          `is in use by ${holder ? `process ${holder[1]} on ${holder[2]}` : 'another process'} (its lock is ${path}); one process per state folder: stop that one, or give another folder`,
        );
      }
      // Locked a file the path no longer names (its holder removed it as it left): try again.
      const held = fstatSync(fd);
      const named = lstatSync(path, { throwIfNoEntry: false });
      if (named?.ino !== held.ino || named.dev !== held.dev) return undefined;
      try {
        ftruncateSync(fd);
        writeSync(fd, `${process.pid} ${hostname()}\n`, 0);
      } catch (error) {
        // The lock is the first write: a folder that takes none is refused, and left as it was.
        unlinkSync(path);
        return refuse(`cannot be written (${codeOf(error)})`);
      }
      keep = true;
      return () => {
        try {
          // Removed while still held, then let go: see above.
          unlinkSync(path);
        } catch {
          // Gone already, or the folder is: nothing to remove.
        }
        closeSync(fd);
      };
    } finally {
      if (!keep) closeSync(fd);
    }
  };
  for (let tries = 0; tries < 5; tries++) {
    const release = attempt();
    if (release) return release;
  }
  return refuse(`has a lock (${path}) that keeps changing hands; one process per state folder`);
}

/** Opens (creating it if needed), locks and loads the state folder `path`; throws a clear error for anything else. */
export async function openState(path: string, { maxWorlds, maxWorldBytes, document }: OpenOptions): Promise<Backing> {
  const refuse = (why: string): never => {
    throw new Error(`--state ${path} ${why}`);
  };
  const refuseLeft = (why: string): never =>
    refuse(`${why}; it is left as it is: move it away, or give another folder`);

  // A link to a folder is followed: the folder it names is used, and the link stays.
  // Not there (ENOTDIR: a parent is a file) is for mkdir to tell.
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
  } else if (found.isFile()) {
    return refuseLeft('is a file, not a sandbox state folder');
  } else if (!found.isDirectory()) {
    return refuseLeft('is not a folder');
  }
  const real = await realpath(path);
  if (openHere.has(real)) return refuse('is in use by this process already; one sandbox per state folder');

  const names = await readdir(path).catch((error: unknown) => refuse(`cannot be read (${codeOf(error)})`));
  if (names.includes(MARKER_FILE)) {
    let marker: unknown;
    try {
      marker = JSON.parse(await readFile(join(path, MARKER_FILE), 'utf8'));
    } catch {
      return refuseLeft(`has a ${MARKER_FILE} that is not a gitea-mock sandbox's`);
    }
    const version = (marker as Record<string, unknown> | null)?.[MARKER];
    if (version === undefined) return refuseLeft(`has a ${MARKER_FILE} that is not a gitea-mock sandbox's`);
    if (version !== VERSION)
      return refuseLeft(`is a sandbox state folder of format ${String(version)}, not ${VERSION}`);
  } else if (names.length > 0) {
    return refuseLeft(`is a folder that is not a gitea-mock sandbox state folder (it has no ${MARKER_FILE})`);
  }

  // Taking the lock is writing to the folder too: a folder that cannot be written is refused here, at start.
  const release = await takeLock(path, refuse);
  openHere.add(real);
  releases.add(release);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const each of releases) each();
    });
  }
  const unlock = (): void => {
    releases.delete(release);
    release();
    openHere.delete(real);
  };

  try {
    if (!names.includes(MARKER_FILE))
      await writeAtomically(path, MARKER_FILE, [`${JSON.stringify({ [MARKER]: VERSION })}\n`]);
    // Holding the lock, no save of another process is in progress: any temporary is a dead one's.
    for (const name of names) {
      if (!TEMPORARY.test(name)) continue;
      if ((await lstat(join(path, name))).isDirectory())
        return refuseLeft(`holds ${name}, a folder named like one of the sandbox's temporary files`);
      await unlink(join(path, name)).catch((error: unknown) =>
        codeOf(error) === 'ENOENT'
          ? undefined
          : refuse(`cannot remove ${name}, a temporary file a stopped sandbox left (${codeOf(error)})`),
      );
    }

    const entries: { key: string; stored: Stored; time: number }[] = [];
    let check: WorldCheck | undefined;
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
      const text = await readFile(file, 'utf8');
      let world: unknown;
      try {
        world = JSON.parse(text);
      } catch {
        return refuseLeft(`holds ${name}, which is not JSON`);
      }
      // Ajv and the document are loaded only when there is a world to check.
      check ??= (await import('./world-check.js')).createWorldCheck(document);
      const problem = check(world);
      if (problem !== undefined) return refuseLeft(`holds ${name}, which is not a world the sandbox wrote: ${problem}`);
      entries.push({ key, stored: { world: world as World, bytes: Buffer.byteLength(text) }, time: info.mtimeMs });
    }
    entries.sort((a, b) => a.time - b.time);
    // Beyond --max-worlds, the least recently written go, as they would have gone in memory.
    const kept = entries.slice(Math.max(0, entries.length - maxWorlds));
    for (const { key } of entries.slice(0, entries.length - kept.length))
      await rm(join(path, `${key}.json`), { force: true });

    return {
      path,
      worlds: new Map(kept.map(({ key, stored }) => [key, stored])),
      save: (key, pieces) => writeAtomically(path, `${key}.json`, pieces),
      async drop(key) {
        // unlink, not rm: rm answers a refusal (EPERM) by trying rmdir, and reports its ENOTDIR instead.
        await unlink(join(path, `${key}.json`)).catch((error: unknown) => {
          if (codeOf(error) !== 'ENOENT') throw error;
        });
        await syncFolder(path);
      },
      async close() {
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
