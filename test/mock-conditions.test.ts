// The bounds of the mock's request journal (mock/src/front/journal.ts), which no run of requests
// should reach in a test: the newest entries of a credential, a ceiling on credentials, paths and
// queries cut; the seeded draws of its conditions (mock/src/front/conditions.ts); and how the
// command line's --latency and --faults are read.
import { describe, expect, it } from 'vitest';
import { createConditions, faultsOption, latencyOption } from '../mock/src/front/conditions.js';
import { createJournal, JOURNAL_ENTRIES, JOURNALS } from '../mock/src/front/journal.js';

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
});
