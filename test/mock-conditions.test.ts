// The bounds of the mock's request journal (mock/src/front/journal.ts), which no run of requests
// should reach in a test: the newest entries of a credential, a ceiling on credentials, paths and
// queries cut; the seeded draws of its conditions (mock/src/front/conditions.ts) and the
// ceilings on held requests; how the command line's --latency and --faults are read; and the
// budget of request bodies in flight (mock/src/front/body.ts).
import { describe, expect, it } from 'vitest';
import {
  createBodyBudget,
  createConditions,
  createJournal,
  defaultBodyBudget,
  faultsOption,
  JOURNAL_ENTRIES,
  JOURNALS,
  latencyOption,
  MAX_BODY_BYTES,
} from './support/mock-internals.js';

const answered = { status: 200, condition: { delay: 0 } };
const url = (path: string): URL => new URL(`http://127.0.0.1${path}`);

describe('the journal', () => {
  it(`keeps the newest ${JOURNAL_ENTRIES} requests of a credential`, () => {
    const journal = createJournal();
    for (let n = 0; n < JOURNAL_ENTRIES + 5; n++) journal.begin('GET', url(`/api/v1/n/${n}`), 'token a')(answered);
    const entries = journal.list('token a');
    expect(entries).toHaveLength(JOURNAL_ENTRIES);
    expect(entries[0]!.path).toBe('/api/v1/n/5');
    expect(entries.at(-1)!.path).toBe(`/api/v1/n/${JOURNAL_ENTRIES + 4}`);
  });

  it(`keeps ${JOURNALS} credentials, dropping the one that sent nothing for longest`, () => {
    const journal = createJournal();
    for (let n = 0; n < JOURNALS; n++) journal.begin('GET', url('/api/v1/version'), `token t${n}`)(answered);
    journal.begin('GET', url('/api/v1/version'), 'token t0')(answered);
    journal.begin('GET', url('/api/v1/version'), 'token new')(answered);
    expect(journal.list('token t0')).toHaveLength(2);
    expect(journal.list('token t1')).toEqual([]);
    expect(journal.list('token new')).toHaveLength(1);
  });

  it('cuts long paths and queries, drops query tokens, and keeps requests without a credential apart', () => {
    const journal = createJournal();
    const long = 'x'.repeat(1000);
    journal.begin('GET', url(`/api/v1/${long}?token=t0p&q=${long}&access_token=t1p`), 'token a')(answered);
    journal.begin('GET', url('/api/v1/version'), undefined)(answered);
    journal.begin('GET', url('/api/v1/version'), 'token')(answered);
    const [entry] = journal.list('token a');
    expect(entry!.path).toHaveLength(256);
    expect(entry!.path.endsWith('…')).toBe(true);
    expect(entry!.query).toMatch(/^q=x+…$/);
    expect(entry!.query).toHaveLength(256);
    expect(journal.list().map(({ path }) => path.slice(0, 12))).toEqual([
      '/api/v1/xxxx',
      '/api/v1/vers',
      '/api/v1/vers',
    ]);
    journal.clear();
    expect(journal.list()).toEqual([]);
  });
});

describe('the conditions', () => {
  it('draw the same delays and faults for the same seed, and a request’s own Prefer leaves the draws as they were', () => {
    const options = { latency: [0, 1000] as const, faults: 0.5, seed: 's' };
    const draws = (conditions: ReturnType<typeof createConditions>, prefer: number) =>
      Array.from({ length: 40 }, (_, n) => conditions.decide(n === prefer ? { delay: 7, fault: 'none' } : {}));
    const first = draws(createConditions(options), -1);
    const second = draws(createConditions(options), 3);
    expect(second[3]).toEqual({ delay: 7 });
    expect(second.filter((_, n) => n !== 3)).toEqual(first.filter((_, n) => n !== 3));
    expect(new Set(first.map(({ fault }) => fault))).toEqual(new Set([undefined, 'reset', 502, 503, 504]));
    expect(draws(createConditions({ ...options, seed: 't' }), -1)).not.toEqual(first);
  });

  it('read --latency and --faults as the command line gives them, refusing what does not fit', () => {
    expect([latencyOption('300'), latencyOption('250-300'), latencyOption('0-60000')]).toEqual([
      300,
      [250, 300],
      [0, 60000],
    ]);
    for (const text of ['60001', '300-250', '-5', '1e3', '', '250-'])
      expect(latencyOption(text)).toMatch(/^invalid --latency/);
    expect([faultsOption('0.1'), faultsOption('1'), faultsOption('.5:503, reset')]).toEqual([
      { rate: 0.1 },
      { rate: 1 },
      { rate: 0.5, kinds: [503, 'reset'] },
    ]);
    for (const text of ['0', '1.5', '10%', '0.1:', '0.1:500', 'x'])
      expect(faultsOption(text)).toMatch(/^invalid --faults/);
  });

  it('admit held requests up to their credential’s ceiling and the one in all, and take back what is given back', () => {
    const conditions = createConditions({ maxHeld: 3, maxHeldPerCredential: 2 });
    const [a1, a2, a3] = ['token a', 'token a', 'token a'].map((credential) => conditions.admitHeld(credential));
    expect([typeof a1, typeof a2, a3]).toEqual(['function', 'function', expect.objectContaining({ status: 429 })]);
    const anonymous = conditions.admitHeld(undefined);
    expect(typeof anonymous).toBe('function');
    expect(conditions.admitHeld('token b')).toEqual(expect.objectContaining({ status: 503 }));
    // Given back twice, counted once.
    (a1 as () => void)();
    (a1 as () => void)();
    expect(typeof conditions.admitHeld('token b')).toBe('function');
    expect(conditions.admitHeld('token c')).toEqual(expect.objectContaining({ status: 503 }));
    expect(() => createConditions({ maxHeld: 0 })).toThrow(/maxHeld must be a whole number/);
    expect(() => createConditions({ maxHeld: 2, maxHeldPerCredential: 3 })).toThrow(/up to maxHeld/);
  });
});

describe('the budget of request bodies in flight', () => {
  it('refuses bytes past it with 503, a body larger than it with 413, and takes nothing after a release', () => {
    const budget = createBodyBudget(100);
    const [first, second] = [budget.reading(), budget.reading()];
    expect([first.take(60), second.take(30)]).toEqual([undefined, undefined]);
    expect(second.take(20)).toEqual(expect.objectContaining({ status: 503 }));
    // Refused, the second holds nothing: its 30 bytes are back.
    expect(budget.reading().take(40)).toBeUndefined();
    first.release();
    expect(first.take(1)).toEqual(expect.objectContaining({ status: 503 }));
    const alone = budget.reading();
    expect([alone.declared(101)?.status, alone.declared(100)]).toEqual([413, undefined]);
    expect(alone.take(101)).toEqual(expect.objectContaining({ status: 413 }));
  });

  it('is an eighth of the heap by default, never below two bodies, and unbounded where the heap is unknown', () => {
    expect(defaultBodyBudget(4096 * 1024 * 1024)).toBe(512 * 1024 * 1024);
    expect(defaultBodyBudget(64 * 1024 * 1024)).toBe(2 * MAX_BODY_BYTES);
    expect(defaultBodyBudget(undefined)).toBe(Infinity);
  });
});
