// The conditions a request is answered under: `Prefer`, `--latency`, `--faults`, and ceilings on requests held at once.
import { sha256 } from '@noble/hashes/sha2';
import { utf8Bytes } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import { exposing } from './cors.js';
import type { Journal } from './journal.js';
import type { MockOperation } from './operations.js';

export type Fault = 'reset' | 502 | 503 | 504;
const FAULTS: readonly Fault[] = ['reset', 502, 503, 504];
const MAX_DELAY_MS = 60_000;

export interface Preference {
  code?: number;
  example?: string;
  dynamic?: boolean;
  delay?: number;
  fault?: Fault | 'none';
}

const faultNamed = (name: string): Fault | undefined => FAULTS.find((fault) => String(fault) === name);

export type PreferResult = { ok: true; preference: Preference } | { ok: false; message: string };

/** Prism reads only part of a comma-separated `Prefer` and answers a miss with a confusing 404, so the mock parses it. */
function parsePrefer(header: string | undefined): PreferResult {
  const preference: Preference = {};
  for (const part of header?.split(/[,;]/) ?? []) {
    const [, name = '', raw = ''] = /^([^=]*)(?:=([\s\S]*))?$/.exec(part)!;
    const key = name.trim().toLowerCase();
    const value = raw.trim().replace(/^"(.*)"$/, '$1');
    const refusal = (message: string): PreferResult => ({ ok: false, message: `Prefer: ${message}, not "${value}"` });
    if (key === 'code') {
      if (!/^[1-5][0-9]{2}$/.test(value)) return refusal('code must be a three-digit status');
      preference.code = Number(value);
    } else if (key === 'example') {
      if (value === '') return { ok: false, message: 'Prefer: example needs a name' };
      preference.example = value;
    } else if (key === 'dynamic') {
      if (value !== 'true' && value !== 'false') return refusal('dynamic must be true or false');
      preference.dynamic = value === 'true';
    } else if (key === 'delay') {
      if (!/^[0-9]{1,5}$/.test(value) || Number(value) > MAX_DELAY_MS)
        return refusal(`delay must be whole milliseconds from 0 to ${MAX_DELAY_MS}`);
      preference.delay = Number(value);
    } else if (key === 'fault') {
      const fault = value === 'none' ? value : faultNamed(value);
      if (fault === undefined) return refusal('fault must be reset, 502, 503, 504 or none');
      preference.fault = fault;
    }
    // Other preferences (return=minimal, respond-async, …) are not ours to refuse.
  }
  return { ok: true, preference };
}

export function checkPreference(op: MockOperation, { code, example }: Preference): string | undefined {
  const codes = [...op.responses.keys()];
  if (code !== undefined && !op.responses.has(code))
    return `Prefer: code=${code} is not documented for ${op.operationId}; documented: ${codes.join(', ')}`;
  if (example === undefined) return undefined;
  const names = (code === undefined ? codes : [code]).flatMap((status) => op.responses.get(status) ?? []);
  if (names.includes(example)) return undefined;
  const where = code === undefined ? op.operationId : `${op.operationId} ${code}`;
  return `Prefer: example=${example} is not documented for ${where}; documented examples: ${names.join(', ') || 'none'}`;
}

export const codeOfExample = (op: MockOperation, example: string): number | undefined =>
  [...op.responses].find(([, names]) => names.includes(example))?.[0];

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

export const DEFAULT_MAX_HELD = 2048;

export type Condition = { delay: number; fault?: Fault };

export type Conditions = ReturnType<typeof createConditions>;

const isDelay = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_DELAY_MS;
const isRange = (range: unknown): range is [number, number] =>
  Array.isArray(range) && range.length === 2 && range.every(isDelay) && range[0]! <= range[1]!;
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1;

/** A stream per use, so faults leave the delays as they were. */
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

export function createConditions(options: ConditionOptions = {}) {
  const { latency, faults, maxHeld = DEFAULT_MAX_HELD } = options;
  const { maxHeldPerCredential = Math.max(1, Math.floor(maxHeld / 4)) } = options;
  if (!isCount(maxHeld)) throw new TypeError('maxHeld must be a whole number of requests from 1');
  if (!isCount(maxHeldPerCredential) || maxHeldPerCredential > maxHeld)
    throw new TypeError('maxHeldPerCredential must be a whole number of requests from 1 up to maxHeld');
  const range = typeof latency === 'number' ? [latency, latency] : latency;
  if (range !== undefined && !isRange(range))
    throw new TypeError(
      `latency must be whole milliseconds from 0 to ${MAX_DELAY_MS}, or [min, max] of them with min ≤ max`,
    );
  const { rate, kinds = FAULTS } = typeof faults === 'number' ? { rate: faults } : (faults ?? { rate: 0 });
  if (faults !== undefined && !(typeof rate === 'number' && rate > 0 && rate <= 1))
    throw new TypeError('faults must be a share of requests above 0 and at most 1, such as 0.1');
  if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((kind) => FAULTS.includes(kind)))
    throw new TypeError('faults.kinds must list one or more of reset, 502, 503 and 504');
  const random = randomness(options.seed);
  const byCredential = new Map<string, number>();
  let held = 0;
  return {
    decide(preference: Preference): Condition {
      // Drawn for every request, whatever it prefers, so a request's own choice leaves the sequence as it was.
      const delay = range ? range[0]! + Math.floor(random('latency') * (range[1]! - range[0]! + 1)) : 0;
      const faulted = rate > 0 && random('fault') < rate;
      const fault = faulted ? kinds[Math.floor(random('fault kind') * kinds.length)] : undefined;
      const chosen =
        preference.fault === undefined ? fault : preference.fault === 'none' ? undefined : preference.fault;
      return { delay: preference.delay ?? delay, ...(chosen === undefined ? {} : { fault: chosen }) };
    },
    admitHeld(authorization: string | undefined): (() => void) | { status: 429 | 503; message: string } {
      const key = authorization === undefined ? '' : keyOf(authorization);
      const mine = byCredential.get(key) ?? 0;
      if (mine >= maxHeldPerCredential)
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
    },
  };
}

function hold(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export function latencyOption(text: string): number | [number, number] | string {
  const match = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  const range = match ? [Number(match[1]), Number(match[2] ?? match[1])] : [];
  if (!match || !isRange(range))
    return `invalid --latency "${text}": give whole milliseconds up to ${MAX_DELAY_MS}, or a range such as 250-300`;
  return match[2] === undefined ? range[0]! : [range[0]!, range[1]!];
}

export function faultsOption(text: string): { rate: number; kinds?: Fault[] } | string {
  const [share = '', names] = text.split(':');
  const rate = /^(0|1)?(\.[0-9]+)?$/.test(share) ? Number(share) : NaN;
  const kinds = names?.split(',').map((name) => faultNamed(name.trim()));
  if (!(rate > 0 && rate <= 1) || kinds?.some((kind) => kind === undefined))
    return `invalid --faults "${text}": give a share of requests above 0 and at most 1, such as 0.1, optionally followed by :reset,502,503,504 or some of them`;
  return kinds === undefined ? { rate } : { rate, kinds: kinds as Fault[] };
}

export function seedText(seed: unknown): string | undefined {
  if (seed === undefined || typeof seed === 'string') return seed;
  if (typeof seed === 'number' && Number.isFinite(seed)) return String(seed);
  throw new TypeError('seed must be a string or a finite number, such as 7');
}

/** nginx's default error page (`server_tokens off`, CRLF). */
const nginxPage = (status: number, reason: string) => ({
  status,
  statusText: reason,
  headers: { Server: 'nginx', 'Content-Type': 'text/html' } as Record<string, string>,
  body: `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
});

const FAULT_ANSWERS: Record<Exclude<Fault, 'reset'>, ReturnType<typeof nginxPage>> = {
  502: nginxPage(502, 'Bad Gateway'),
  // Gitea's maintenance page (routers/common/maintenancemode.go, renderServiceUnavailable); Go sniffs the type.
  503: {
    status: 503,
    statusText: 'Service Unavailable',
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'max-age=0, private, must-revalidate, no-transform',
      'X-Content-Type-Options': 'nosniff',
      'Retry-After': '1',
    },
    body: 'Service Unavailable',
  },
  504: nginxPage(504, 'Gateway Time-out'),
};

export function faultAnswer(fault: Exclude<Fault, 'reset'>, cors: Record<string, string>) {
  const answer = FAULT_ANSWERS[fault];
  const headers = answer.headers['Retry-After'] === undefined ? cors : exposing(cors, 'Retry-After');
  return { ...answer, headers: { ...headers, ...answer.headers, 'Content-Length': String(answer.body.length) } };
}

interface ConditionedRequest {
  method: string;
  url: URL;
  authorization: string | undefined;
  prefer: string | undefined;
  operationId: string | undefined;
  signal(): AbortSignal;
}

interface Ways<T> {
  answer(prefer: PreferResult): Promise<T>;
  held?(): void;
  fault(fault: Exclude<Fault, 'reset'>): T;
  refuse(refusal: { status: 429 | 503; message: string }): T;
  reset(): T;
  statusOf(sent: T): number | null;
}

/** The answer, the fault or the reset the condition names, of a request not held. */
function conditioned<T>(condition: Condition, prefer: PreferResult, ways: Ways<T>): T | Promise<T> {
  if (condition.fault === undefined) return ways.answer(prefer);
  return condition.fault === 'reset' ? ways.reset() : ways.fault(condition.fault);
}

export async function underConditions<T>(
  { conditions, journal }: { conditions: Conditions; journal: Journal },
  request: ConditionedRequest,
  ways: Ways<T>,
): Promise<T> {
  const prefer = parsePrefer(request.prefer);
  const record = journal.begin(request.method, request.url, request.authorization);
  const decided = conditions.decide(prefer.ok ? prefer.preference : {});
  const admitted = decided.delay > 0 ? conditions.admitHeld(request.authorization) : undefined;
  const condition = typeof admitted === 'object' ? { delay: 0 } : decided;
  // Most requests are not held: one await, not two.
  const held = async (release: () => void): Promise<T> => {
    const signal = request.signal();
    ways.held?.();
    await hold(condition.delay, signal);
    release();
    return signal.aborted ? ways.reset() : conditioned(condition, prefer, ways);
  };
  const sent = await (admitted === undefined
    ? conditioned(condition, prefer, ways)
    : typeof admitted === 'object'
      ? ways.refuse(admitted)
      : held(admitted));
  record({ operationId: request.operationId, status: ways.statusOf(sent), condition });
  return sent;
}
