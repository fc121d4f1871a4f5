// `--state FILE`: the sandbox's worlds on disk. Loaded once at start (a file that is not a sandbox
// state file is refused, never overwritten) and saved after writes, atomically: the worlds are
// written to a temporary file beside it, flushed to disk, and renamed over it, so a crash or a
// kill -9 leaves either the previous file or the new one. Saves coalesce: a write waits for the
// first save that starts after it, so every acknowledged write is on disk.
import { open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isWorld, type World } from './world.js';

const MARKER = 'gitea-mock-sandbox';
const VERSION = 1;

interface StateFile {
  [MARKER]: typeof VERSION;
  /** Worlds by the SHA-256 of their credential, least recently used first. */
  worlds: Record<string, World>;
}

/** The worlds in `path`, or none when it does not exist yet; throws a clear error for anything else. */
export async function loadWorlds(path: string): Promise<Map<string, World>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new Error(`--state ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const refuse = (why: string): never => {
    throw new Error(`--state ${path} ${why}; it is left as it is: move it away, or give another file`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refuse('is not JSON, so not a sandbox state file');
  }
  const file = parsed as Partial<StateFile> | null;
  if (typeof file !== 'object' || file === null || !(MARKER in file)) return refuse('is not a gitea-mock sandbox state file');
  if (file[MARKER] !== VERSION) return refuse(`is a sandbox state file of format ${String(file[MARKER])}, not ${VERSION}`);
  if (typeof file.worlds !== 'object' || file.worlds === null) return refuse('has no worlds');
  const worlds = new Map<string, World>();
  for (const [key, world] of Object.entries(file.worlds)) {
    if (!/^[0-9a-f]{64}$/.test(key) || !isWorld(world)) return refuse(`holds a world (${key.slice(0, 12)}…) that is not one the sandbox wrote`);
    worlds.set(key, world);
  }
  return worlds;
}

export interface Saver {
  /** Resolves once a save that includes every change made before this call is on disk. */
  save(): Promise<void>;
}

export function createSaver(path: string, snapshot: () => Map<string, World>): Saver {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let previous: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;

  async function write(): Promise<void> {
    const file: StateFile = { [MARKER]: VERSION, worlds: Object.fromEntries(snapshot()) };
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(file));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    // The rename itself reaches the disk with the folder.
    const folder = await open(dirname(path), 'r');
    try {
      await folder.sync();
    } catch {
      // Not every platform can sync a folder; the rename is still atomic.
    } finally {
      await folder.close();
    }
  }

  return {
    save() {
      if (queued) return queued;
      const next = previous.then(() => {
        // From here on, a new change needs a new save: this one takes its snapshot now.
        queued = undefined;
        return write().catch(async (error: unknown) => {
          await rm(temporary, { force: true });
          throw error;
        });
      });
      queued = next;
      previous = next.catch(() => {});
      return next;
    },
  };
}
