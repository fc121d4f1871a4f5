// What the sandbox asks of a store whose worlds other processes share (PostgreSQL:
// world-postgres.ts), besides saving and dropping. The sandbox keeps the worlds it uses in memory
// as before, each with the version it was stored as; before a read it asks whether that is still
// the stored version, and a batch of writes runs while holding its world across processes, applied
// to the world as stored then. Imports no Node built-in: the sandbox does not either.
import { Refusal } from '../common/refusal.js';
import type { World } from './world.js';

/** A world as stored, with its version: versions never repeat, a reset and a new world included. */
export interface Stored {
  world: World;
  /** Its size as JSON, what the budget counts. */
  bytes: number;
  version: number;
}

/** The world of a key as stored now: the same version as the caller's, another one, or none (the seed). */
export type Look = 'same' | 'none' | Stored;

export interface SharedWorlds {
  /**
   * The world of `key` as stored now, compared with `version`, the one the caller holds; `held` is
   * that world, whose records a newer one is checked against (WorldCheck's `trusted`).
   */
  look(key: string, version: number | undefined, held?: World): Promise<Look>;
  /**
   * Runs `task` while holding `key`'s world: other processes' writes to it wait. `task` gets the
   * world as stored now, and what it saves (`save`) or drops is kept only if it ends without
   * throwing, once `hold` resolves.
   */
  hold<T>(key: string, version: number | undefined, task: (now: Look) => Promise<T>, held?: World): Promise<T>;
  /** Saves `key`'s world while `hold` holds it; resolves with its new version. */
  save(key: string, pieces: readonly string[]): Promise<number>;
  /** Removes every world, of every process. */
  clear(): Promise<void>;
}

/** The store cannot be reached, or is too busy, for now: the sandbox answers 503 with Retry-After. */
export class StateUnavailable extends Refusal {
  /** Seconds a client should wait before trying again. */
  readonly retryAfter = 1;

  constructor(message: string) {
    super(503, message);
  }
}
