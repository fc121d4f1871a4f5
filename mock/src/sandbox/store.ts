// The sandbox's worlds over a Backing (none: in memory; a folder, world-store.ts; PostgreSQL, world-postgres.ts,
// shared: versions compared before a read, locked across processes for a write). The least recently used go beyond
// --max-worlds, a world's writes run one at a time in arrival order, and a world is kept once saved. No Node built-in.
import { Refusal } from '../common/refusal.js';
import type { World } from './world.js';
import { worldChange } from './world-json.js';

/** A world as stored, its size as JSON (what the budget counts) and, in a shared store, its version. */
export interface Stored {
  world: World;
  bytes: number;
  version?: number;
}

/** The world of a key as a shared store holds it now: the version the caller holds, another, or none (the seed). */
export type Look = 'same' | 'none' | (Stored & { version: number });

/** A backing's --max-worlds, --max-world-bytes (a larger world is refused, unread), and the document its records match. */
export interface OpenOptions {
  maxWorlds: number;
  maxWorldBytes: number;
  document?: string | undefined;
}

export interface Backing {
  /** The worlds found at start, least recently written first (none in a shared store: a world is read when a request names it). */
  readonly worlds?: Map<string, Stored>;
  /** Writes a world's text, made when asked (and, where shared, what changed since the version held); resolves once it is durable, with its new version (a number) where shared. */
  save(key: string, text: () => Promise<readonly string[]>, change?: string): Promise<unknown>;
  drop(key: string): Promise<void>;
  close(): Promise<void>;
  /** Set where other processes share the worlds: a world is then never dropped for --max-worlds. */
  readonly shared?: {
    /** The world of `key` now, against `held` (of `version`): a newer one is `held` changed, or read whole and its records checked against those of `held`. */
    look(key: string, version: number | undefined, held: Stored): Promise<Look>;
    /** Runs `task` holding `key` across processes; what `save` saves meanwhile commits when it ends. */
    hold<T>(key: string, version: number | undefined, held: Stored, task: (now: Look) => Promise<T>): Promise<T>;
    clear(): Promise<void>;
  };
}

/** The store cannot be reached, or is too busy, for now (a 503): the sandbox answers it with Retry-After: 1. */
export class StateUnavailable extends Refusal {}

/** A shared store keeps this many of a world's latest changes: a process that many writes behind reads only what changed. */
export const CHANGES_KEPT = 8;

/** `kept`: the backing has the world (loaded from it, or saved). */
type Slot = Stored & { kept?: boolean };

/** A store over `backing` (none: in memory); `seed` is the world of a key with none, trusted by the checks. */
export function worldStore(backing: Backing | undefined, maxWorlds: number, seed: World) {
  // Insertion order is recency: a world used is moved to the end, the first is dropped first.
  const worlds = new Map<string, Slot>([...(backing?.worlds ?? [])].map(([key, s]) => [key, { ...s, kept: true }]));
  const tails = new Map<string, Promise<unknown>>();
  const shared = backing?.shared;
  /** What a process holds of a world it has not read: the seed, at no version. */
  const unheld: Stored = { world: seed, bytes: 0 };

  function exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return run;
  }
  function used(key: string): Slot | undefined {
    const slot = worlds.get(key);
    if (slot && worlds.delete(key)) worlds.set(key, slot);
    return slot;
  }
  function keep(key: string, slot: Slot): void {
    worlds.set(key, slot);
    for (const [victim, dropped] of worlds) {
      if (worlds.size <= maxWorlds) break;
      worlds.delete(victim);
      // Its file goes after the writes queued for it, unless they made it afresh; one that cannot
      // be removed now goes at the next start. A shared store keeps it: only this copy goes.
      if (backing && !shared)
        void exclusive(victim, async () =>
          dropped.kept && !worlds.get(victim)?.kept ? backing.drop(victim) : undefined,
        ).catch(() => {});
    }
  }
  function adopt(key: string, now: Look): void {
    if (now === 'same') return;
    worlds.delete(key);
    if (now !== 'none') keep(key, { ...now, kept: true });
  }
  /** What changed from `known` (held at the stored version, `next` made from it) to `next`, for other processes; none when it would cost them more than the world. */
  function changeOf(known: Slot | undefined, next: Stored): string | undefined {
    if (!shared || known?.version === undefined) return undefined;
    const change = worldChange(known.world, next.world, next.bytes);
    return change.length * CHANGES_KEPT <= next.bytes ? change : undefined;
  }
  const drop = (key: string) =>
    exclusive(key, async () => {
      await backing?.drop(key);
      worlds.delete(key);
    });

  return {
    /** The world of `key` as stored now, made the most recently used; undefined before its first write. */
    async read(key: string) {
      if (shared) {
        const version = worlds.get(key)?.version;
        const now = await shared.look(key, version, worlds.get(key) ?? unheld);
        // A write of this process committed meanwhile is newer than what the look found.
        if (worlds.get(key)?.version === version) adopt(key, now);
      }
      return used(key);
    },
    peek: (key: string) => worlds.get(key),
    /** Runs `task` on the world of `key` after the tasks queued before (held across processes); what it returns is saved, then kept. */
    write<T>(
      key: string,
      task: (now: Slot | undefined) => Promise<{ result: T; next?: Stored & { text(): Promise<readonly string[]> } }>,
    ) {
      const apply = async () => {
        // Taken only now: a world taken before waiting could have been written or dropped meanwhile.
        const known = used(key);
        const { result, next } = await task(known);
        const version = next && backing ? await backing.save(key, next.text, changeOf(known, next)) : undefined;
        return { result, next, known, version };
      };
      return exclusive(key, async () => {
        const slot = worlds.get(key);
        const { result, next, known, version } = shared
          ? await shared.hold(key, slot?.version, slot ?? unheld, (now) => {
              adopt(key, now);
              return apply();
            })
          : await apply();
        // Kept only now that it is saved (committed): no read sees a write before that.
        if (next) {
          const kept: Slot = { world: next.world, bytes: next.bytes, kept: backing !== undefined };
          if (typeof version === 'number') kept.version = version;
          // A world dropped meanwhile stays dropped, as if dropped just after (its removal is queued after this).
          if (known) Object.assign(known, kept);
          else keep(key, kept);
        }
        return result;
      });
    },
    drop,
    async clear() {
      await Promise.all([...worlds.keys()].map(drop));
      // Worlds this process never held too.
      await shared?.clear();
    },
    async close() {
      await Promise.all(tails.values());
      await backing?.close();
    },
  };
}
