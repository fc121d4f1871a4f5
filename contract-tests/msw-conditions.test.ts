// Latency, faults and the journal in `gitea-mock/msw`, as a frontend test uses them: the built
// handlers (mock/dist/msw.mjs) in MSW's setupServer, the client against a host that does not
// exist. A delay holds the answer, `fault=reset` is a network error, `requests()` lists what the
// handlers answered and `reset()` clears it. Times are lower bounds only.
import { fileURLToPath } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGiteaClient } from '../src/index.js';

type MswModule = typeof import('../mock/src/msw/handlers.js');
const BUILT = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));
const { createGiteaHandlers } = (await import(BUILT)) as MswModule;

const BASE = 'https://gitea.example.org/api/v1';
const KEY = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } } as const;
const client = (token: string, retry = 0) => createGiteaClient({ baseUrl: BASE, auth: { token }, retry });

/** Serves `gitea`'s handlers through setupServer for the describe it is called in; the server, for swapping handlers. */
function served(gitea: ReturnType<typeof createGiteaHandlers>): ReturnType<typeof setupServer> {
  const server = setupServer(...gitea.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterAll(async () => {
    server.close();
    await gitea.close();
  });
  return server;
}

describe('Prefer: delay and fault in the handlers', () => {
  const gitea = createGiteaHandlers({ baseUrl: BASE });
  served(gitea);
  afterEach(() => gitea.reset());

  it('holds the answer for the delay asked for', async () => {
    const started = performance.now();
    const answer = await client('screen').GET('/repos/{owner}/{repo}/keys/{id}', {
      ...KEY,
      headers: { Prefer: 'delay=300' },
    });
    expect(answer.response.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('fails the fetch with a network error for fault=reset', async () => {
    const failure = await client('screen')
      .GET('/repos/{owner}/{repo}/keys/{id}', { ...KEY, headers: { Prefer: 'fault=reset' } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    await expect(fetch(`${BASE}/version`, { headers: { prefer: 'fault=reset' } })).rejects.toThrow(TypeError);
  });

  it('answers fault=503 as Gitea in maintenance mode, and 502 and 504 as nginx', async () => {
    const maintenance = await fetch(`${BASE}/version`, { headers: { prefer: 'fault=503' } });
    expect([maintenance.status, maintenance.headers.get('retry-after'), await maintenance.text()]).toEqual([
      503,
      '1',
      'Service Unavailable',
    ]);
    for (const [code, reason] of [
      [502, 'Bad Gateway'],
      [504, 'Gateway Time-out'],
    ] as const) {
      const page = await fetch(`${BASE}/version`, { headers: { prefer: `fault=${code}` } });
      expect(page.status).toBe(code);
      expect(page.headers.get('content-type')).toBe('text/html');
      expect(await page.text()).toContain(`<center><h1>${code} ${reason}</h1></center>`);
    }
  });

  it('lists what it answered with requests(), per credential, and clears it with reset()', async () => {
    const retrying = client('retrying', 2);
    const answer = await retrying.GET('/repos/{owner}/{repo}/keys/{id}', { ...KEY, headers: { Prefer: 'fault=503' } });
    expect(answer.response.status).toBe(503);
    await client('other').GET('/repos/{owner}/{repo}/keys/{id}', KEY);
    await fetch(`${BASE}/version`);

    const mine = await gitea.requests({ token: 'retrying' });
    expect(mine.map(({ operationId, status, fault }) => [operationId, status, fault])).toEqual([
      ['repoGetKey', 503, 503],
      ['repoGetKey', 503, 503],
      ['repoGetKey', 503, 503],
    ]);
    expect((await gitea.requests('token other')).map(({ status, fault }) => [status, fault])).toEqual([[200, null]]);
    // Without a credential: every request, the anonymous one too, in the order they were answered.
    expect((await gitea.requests()).map(({ path, status }) => `${status} ${path}`)).toEqual([
      '503 /api/v1/repos/acme/rocket/keys/11001',
      '503 /api/v1/repos/acme/rocket/keys/11001',
      '503 /api/v1/repos/acme/rocket/keys/11001',
      '200 /api/v1/repos/acme/rocket/keys/11001',
      '200 /api/v1/version',
    ]);
    // The same list over HTTP, as the server answers it.
    const listed = await fetch('https://gitea.example.org/__mock/requests', {
      headers: { authorization: 'token other' },
    });
    expect(await listed.json()).toEqual(await gitea.requests({ token: 'other' }));

    await gitea.reset();
    expect(await gitea.requests()).toEqual([]);
  });
});

describe('latency and faults for every request in the handlers', () => {
  const options = { baseUrl: BASE, latency: [250, 300], faults: { rate: 0.5, kinds: [503] }, seed: 'msw-7' } as const;
  const gitea = createGiteaHandlers(options);
  const server = served(gitea);

  it('holds every answer within the range, faults a share, and repeats both for the seed', async () => {
    const statuses = async (): Promise<number[]> => {
      const seen: number[] = [];
      for (let n = 0; n < 8; n++) {
        const started = performance.now();
        seen.push((await fetch(`${BASE}/version`, { headers: { authorization: 'token screen' } })).status);
        expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      }
      return seen;
    };
    const first = await statuses();
    expect(first).toContain(200);
    expect(first).toContain(503);
    expect((await gitea.requests({ token: 'screen' })).every(({ delay }) => delay >= 250 && delay <= 300)).toBe(true);

    const again = createGiteaHandlers(options);
    server.resetHandlers(...again.handlers);
    expect(await statuses()).toEqual(first);
    expect((await again.requests()).map(({ delay }) => delay)).toEqual(
      (await gitea.requests()).map(({ delay }) => delay),
    );
    await again.close();
  });

  it('refuses options that do not fit at once, saying what to give', () => {
    expect(() => createGiteaHandlers({ baseUrl: BASE, latency: [300, 250] })).toThrow(
      'latency must be whole milliseconds from 0 to 60000',
    );
    expect(() => createGiteaHandlers({ baseUrl: BASE, faults: 2 })).toThrow(
      'faults must be a share of requests above 0 and at most 1',
    );
    expect(() => createGiteaHandlers({ baseUrl: BASE, faults: { rate: 0.1, kinds: [500 as 502] } })).toThrow(TypeError);
  });
});

describe('a seed given as a number', () => {
  const options = { baseUrl: BASE, faults: { rate: 0.5, kinds: [503] } } as const;
  const gitea = createGiteaHandlers({ ...options, seed: 7 });
  const server = served(gitea);
  const statuses = async (): Promise<number[]> => {
    const seen: number[] = [];
    for (let n = 0; n < 12; n++)
      seen.push((await fetch(`${BASE}/version`, { headers: { authorization: 'token seeded' } })).status);
    return seen;
  };

  it("is the seed of its digits: 7 faults the same requests as '7', which --seed 7 gives", async () => {
    const first = await statuses();
    expect(first).toContain(200);
    expect(first).toContain(503);
    const text = createGiteaHandlers({ ...options, seed: '7' });
    server.resetHandlers(...text.handlers);
    try {
      expect(await statuses()).toEqual(first);
    } finally {
      await text.close();
    }
  });

  it('is refused at once when it is neither a string nor a finite number, saying what to give', () => {
    for (const seed of [Number.NaN, true, { value: 7 }])
      expect(() => createGiteaHandlers({ ...options, seed: seed as number })).toThrow(
        'seed must be a string or a finite number, such as 7',
      );
  });
});
