// The conditions a request is answered under, decided on arrival: a delay (`Prefer: delay`,
// `--latency`) and a fault instead of the answer (faults.ts), repeatable with a seed; requests held
// at once have ceilings below the connections', in all and per credential.
import { sha256 } from '@noble/hashes/sha2';
import { utf8Bytes } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import { FAULTS, faultNamed, MAX_DELAY_MS, type Fault, type Preference } from './prefer.js';

export interface ConditionOptions {
  /** Every answer held this long, in milliseconds: one number, or `[min, max]` for a random delay in that range. */
  latency?: number | readonly [number, number];
  /** The share of requests (above 0, at most 1) that get a random fault of `kinds` (default: all four) instead of their answer. */
  faults?: number | { rate: number; kinds?: readonly Fault[] };
  /** Makes the random delays and faults repeatable. */
  seed?: string;
  /** Most requests held for a delay at once, `Prefer: delay` and `latency` alike (default 2048; a server keeps it below its connection ceiling). */
  maxHeld?: number;
  /** Most requests of one credential (an `Authorization` value, or none) held at once (default a quarter of `maxHeld`). */
  maxHeldPerCredential?: number;
}

/** The most requests held at once by default: half of the most connections a server keeps open (connections.ts). */
export const DEFAULT_MAX_HELD = 2048;

/** What happens to one request. */
export interface Condition {
  /** Milliseconds it is held before it is answered (0: none). */
  delay: number;
  fault?: Fault;
}

/** A delayed request refused for a ceiling on held requests: 429 for its credential's, 503 for the one in all. */
export interface HoldRefusal {
  status: 429 | 503;
  message: string;
}

export interface Conditions {
  /** The request's own `Prefer: delay` and `fault` first, else the random ones of the options. */
  decide(preference: Preference): Condition;
  /** A place among the held requests for one of `authorization`, and the function that gives it back; the refusal past a ceiling. */
  admitHeld(authorization: string | undefined): (() => void) | HoldRefusal;
}

const isDelay = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_DELAY_MS;

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1;

interface Checked {
  latency?: [number, number];
  rate: number;
  kinds: readonly Fault[];
  maxHeld: number;
  maxHeldPerCredential: number;
}

/** The options checked, with a TypeError that says what to give. */
function checked(options: ConditionOptions): Checked {
  const { latency, faults, maxHeld = DEFAULT_MAX_HELD } = options;
  const { maxHeldPerCredential = Math.max(1, Math.floor(maxHeld / 4)) } = options;
  if (!isCount(maxHeld)) throw new TypeError('maxHeld must be a whole number of requests from 1');
  if (!isCount(maxHeldPerCredential) || maxHeldPerCredential > maxHeld)
    throw new TypeError('maxHeldPerCredential must be a whole number of requests from 1 up to maxHeld');
  const range = typeof latency === 'number' ? [latency, latency] : latency;
  if (
    range !== undefined &&
    (!Array.isArray(range) || range.length !== 2 || !range.every(isDelay) || range[0]! > range[1]!)
  )
    throw new TypeError(
      `latency must be whole milliseconds from 0 to ${MAX_DELAY_MS}, or [min, max] of them with min ≤ max`,
    );
  const { rate, kinds = FAULTS } = typeof faults === 'number' ? { rate: faults } : (faults ?? { rate: 0 });
  if (faults !== undefined && !(typeof rate === 'number' && rate > 0 && rate <= 1))
    throw new TypeError('faults must be a share of requests above 0 and at most 1, such as 0.1');
  if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((kind) => FAULTS.includes(kind)))
    throw new TypeError('faults.kinds must list one or more of reset, 502, 503 and 504');
  return { ...(range ? { latency: [range[0]!, range[1]!] } : {}), rate, kinds, maxHeld, maxHeldPerCredential };
}

/** Counts the requests held, in all and by credential, against their ceilings. */
function heldCeilings(maxHeld: number, perCredential: number): Conditions['admitHeld'] {
  const byCredential = new Map<string, number>();
  let held = 0;
  return (authorization) => {
    // Hashed, as the journal keeps them: no credential is kept in memory.
    const key = authorization === undefined ? '' : keyOf(authorization);
    const mine = byCredential.get(key) ?? 0;
    if (mine >= perCredential)
      return {
        status: 429,
        message: `this credential has ${mine} requests held for a delay, as many as the mock holds for one; try again shortly`,
      };
    if (held >= maxHeld)
      return {
        status: 503,
        message: `the mock holds ${held} requests for a delay, as many as it holds at once; try again shortly`,
      };
    held++;
    byCredential.set(key, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      held--;
      const left = byCredential.get(key)! - 1;
      if (left === 0) byCredential.delete(key);
      else byCredential.set(key, left);
    };
  };
}

/**
 * Numbers in [0, 1), one stream per use, so that turning faults on does not change the delays: with
 * a seed, the n-th of a stream is read from SHA-256 of the seed, the stream's name and n.
 */
function randomness(seed: string | undefined): (stream: string) => number {
  if (seed === undefined) return () => Math.random();
  const drawn = new Map<string, number>();
  return (stream) => {
    const n = drawn.get(stream) ?? 0;
    drawn.set(stream, n + 1);
    const bytes = sha256(utf8Bytes(`${seed}\u0000${stream}\u0000${n}`));
    return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0) / 2 ** 32;
  };
}

export function createConditions(options: ConditionOptions = {}): Conditions {
  const { latency, rate, kinds, maxHeld, maxHeldPerCredential } = checked(options);
  const random = randomness(options.seed);
  return {
    admitHeld: heldCeilings(maxHeld, maxHeldPerCredential),
    decide(preference) {
      // Drawn for every request, whatever it prefers, so a request's own choice leaves the sequence as it was.
      const delay = latency ? latency[0] + Math.floor(random('latency') * (latency[1] - latency[0] + 1)) : 0;
      const faulted = rate > 0 && random('fault') < rate;
      const fault = faulted ? kinds[Math.floor(random('fault kind') * kinds.length)] : undefined;
      const chosen =
        preference.fault === undefined ? fault : preference.fault === 'none' ? undefined : preference.fault;
      return { delay: preference.delay ?? delay, ...(chosen === undefined ? {} : { fault: chosen }) };
    },
  };
}

/** Resolves after `ms`, or as soon as `signal` aborts (the client gave up): it holds the request, never the thread. */
export function hold(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `--latency 250-300` or `--latency 300` as the option, or why it is not one. */
export function latencyOption(text: string): number | [number, number] | string {
  const match = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  const range = match ? [Number(match[1]), Number(match[2] ?? match[1])] : [];
  if (!match || !range.every(isDelay) || range[0]! > range[1]!)
    return `invalid --latency "${text}": give whole milliseconds up to ${MAX_DELAY_MS}, or a range such as 250-300`;
  return match[2] === undefined ? range[0]! : [range[0]!, range[1]!];
}

/** `--faults 0.1` or `--faults 0.1:503,reset` as the option, or why it is not one. */
export function faultsOption(text: string): { rate: number; kinds?: Fault[] } | string {
  const [share = '', names] = text.split(':');
  const rate = /^(0|1)?(\.[0-9]+)?$/.test(share) && share !== '' && share !== '.' ? Number(share) : NaN;
  const kinds = names?.split(',').map((name) => faultNamed(name.trim()));
  if (!(rate > 0 && rate <= 1) || kinds?.some((kind) => kind === undefined) || kinds?.length === 0)
    return `invalid --faults "${text}": give a share of requests above 0 and at most 1, such as 0.1, optionally followed by :reset,502,503,504 or some of them`;
  return kinds === undefined ? { rate } : { rate, kinds: kinds as Fault[] };
}
