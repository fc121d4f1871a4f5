// Latency, faults and the journal of requests, on loopback: `Prefer: delay` and `fault` against
// the mock in process in each mode (examples, dynamic data, the sandbox, the proxy), `--latency`,
// `--faults` and `--seed` through the built bin, and the client's retries of a 503 seen in the
// journal. Times are lower bounds, with upper bounds far above them: the machine is shared.
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnsweringMock, type JournalEntry } from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { createGiteaClient } from '../src/index.js';
import { setupServer } from 'msw/node';
import { createGiteaHandlers } from '../mock/src/msw/handlers.js';
import { call, type Reply } from './support/call.js';
import { firstSettled } from './support/http.js';
import { exitOf, launch } from './support/launch.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const KEY = '/repos/acme/rocket/keys/11001';
/** A delay far longer than any test waits: a request held so is answered only when its client leaves. */
const HELD = { prefer: 'delay=60000' };

/** A credential of its own per test, so a journal (and a world) of its own. */
const credential = (): string => `token conditions-${randomUUID()}`;

/** The journal of `authorization` on the mock at `origin`. */
async function journal(origin: string, authorization: string): Promise<JournalEntry[]> {
  const answer = await call(new URL(`${origin}/__mock/requests`), 'GET', { headers: { authorization } });
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as JournalEntry[];
}

/** A request's answer and how long it took, in milliseconds. */
async function timed(
  url: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; body: string; ms: number }> {
  const started = performance.now();
  const answer = await call(new URL(url), method, { headers, body });
  return { ...answer, ms: performance.now() - started };
}

/** How a request that gets no answer ends: the socket's error code. */
function failureOf(url: string, headers: Record<string, string>, method = 'GET'): Promise<string> {
  return call(url, method, { headers }).then(
    (answer) => {
      throw new Error(`answered ${answer.status}`);
    },
    (error: NodeJS.ErrnoException) => error.code ?? error.message,
  );
}

/** A request its client may leave: its answer, or `left` once the client left. */
function leavable(url: string, headers: Record<string, string>): { answer: Promise<Reply | 'left'>; leave(): void } {
  const leaving = new AbortController();
  const answer = call(url, 'GET', { headers, signal: leaving.signal }).catch(() => 'left' as const);
  return { answer, leave: () => leaving.abort() };
}

const NGINX_PAGE = (title: string): string =>
  `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

describe('the examples, in process', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0 });
  });
  afterAll(() => mock.close());

  it('Prefer: delay=400 answers after at least 400 ms, and other requests are answered meanwhile', async () => {
    const authorization = credential();
    let slowDone = false;
    const slow = timed(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'delay=2000' }).finally(() => {
      slowDone = true;
    });
    const quick = await timed(`${mock.baseUrl}${KEY}`, { authorization });
    expect(quick.status).toBe(200);
    // Answered while the other one is still held.
    expect(slowDone).toBe(false);
    expect((await slow).ms).toBeGreaterThanOrEqual(2000);

    const held = await timed(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'delay=400' });
    expect(held.status).toBe(200);
    // How soon after its delay: bench/time-bounds.mjs.
    expect(held.ms).toBeGreaterThanOrEqual(400);
    const entries = await journal(mock.origin, authorization);
    expect(entries.map(({ delay, status }) => [delay, status])).toEqual([
      [0, 200],
      [2000, 200],
      [400, 200],
    ]);
    expect(entries[2]!.duration).toBeGreaterThanOrEqual(400);
  });

  it('fault=503 answers as Gitea in maintenance mode, with Retry-After: 1', async () => {
    const answer = await timed(`${mock.baseUrl}${KEY}`, { authorization: credential(), prefer: 'fault=503' });
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'retry-after': '1',
      'cache-control': 'max-age=0, private, must-revalidate, no-transform',
      'x-content-type-options': 'nosniff',
    });
    expect(answer.body).toBe('Service Unavailable');
  });

  it.each([
    ['502', 'Bad Gateway'],
    ['504', 'Gateway Time-out'],
  ])('fault=%s answers as nginx in front of Gitea: its default HTML page', async (code, reason) => {
    const answer = await timed(`${mock.baseUrl}${KEY}`, { authorization: credential(), prefer: `fault=${code}` });
    expect(answer.status).toBe(Number(code));
    expect(answer.headers).toMatchObject({ 'content-type': 'text/html', server: 'nginx' });
    expect(answer.body).toBe(NGINX_PAGE(`${code} ${reason}`));
  });

  it('fault=reset closes the connection without an answer, after its delay', async () => {
    const authorization = credential();
    const started = performance.now();
    expect(await failureOf(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'delay=300, fault=reset' })).toBe(
      'ECONNRESET',
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    await expect(fetch(`${mock.baseUrl}${KEY}`, { headers: { authorization, prefer: 'fault=reset' } })).rejects.toThrow(
      TypeError,
    );
    expect(
      (await journal(mock.origin, authorization)).map(({ status, fault, delay }) => [status, fault, delay]),
    ).toEqual([
      [null, 'reset', 300],
      [null, 'reset', 0],
    ]);
  });

  it('gives a browser page CORS on a fault, and lets it read Retry-After', async () => {
    const answer = await timed(`${mock.baseUrl}${KEY}`, {
      authorization: credential(),
      prefer: 'fault=503',
      origin: 'http://localhost:5173',
    });
    expect(answer.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(answer.headers['access-control-expose-headers']).toBe('Link, X-Total-Count, Retry-After');
  });

  it('a client with two retries leaves three repoGetKey 503s in its journal, and none in another credential’s', async () => {
    const token = `retries-${randomUUID()}`;
    const other = credential();
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token }, retry: 2 });
    const started = performance.now();
    const result = await gitea.GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
      headers: { Prefer: 'fault=503' },
    });
    expect(result.response.status).toBe(503);
    // Retry-After: 1, honoured before each of the two retries.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2000);
    await timed(`${mock.baseUrl}${KEY}`, { authorization: other });

    const entries = await journal(mock.origin, `token ${token}`);
    expect(entries.map(({ operationId, status, fault }) => [operationId, status, fault])).toEqual([
      ['repoGetKey', 503, 503],
      ['repoGetKey', 503, 503],
      ['repoGetKey', 503, 503],
    ]);
    expect(entries.every(({ method, path }) => method === 'GET' && path === `/api/v1${KEY}`)).toBe(true);
    const times = entries.map(({ when }) => Date.parse(when));
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(900);
    expect((await journal(mock.origin, other)).map(({ status, fault }) => [status, fault])).toEqual([[200, null]]);
  });

  it('lists a credential’s requests only, oldest first, never a credential, and DELETE clears them', async () => {
    const secret = `s3cret-${randomUUID()}`;
    const authorization = `token ${secret}`;
    await timed(`${mock.baseUrl}/admin/orgs?limit=2&token=${secret}&page=1`, { authorization });
    await timed(`${mock.baseUrl}/version`, { authorization });
    await timed(`${mock.baseUrl}/no/such/path`, { authorization });
    await timed(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'code=404' });
    const answer = await call(new URL(`${mock.origin}/__mock/requests`), 'GET', { headers: { authorization } });
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(answer.body).not.toContain(secret);
    const entries = JSON.parse(answer.body) as JournalEntry[];
    expect(entries.map(({ path, query, operationId, status }) => [path, query, operationId, status])).toEqual([
      ['/api/v1/admin/orgs', 'limit=2&page=1', 'adminGetAllOrgs', 200],
      ['/api/v1/version', '', null, 200],
      ['/api/v1/no/such/path', '', null, 404],
      [`/api/v1${KEY}`, '', 'repoGetKey', 404],
    ]);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(
        ['delay', 'duration', 'fault', 'method', 'operationId', 'path', 'query', 'status', 'when'].sort(),
      );
      expect(new Date(entry.when).toISOString()).toBe(entry.when);
    }
    expect(await journal(mock.origin, credential())).toEqual([]);

    expect(
      (await call(new URL(`${mock.origin}/__mock/requests`), 'DELETE', { headers: { authorization } })).status,
    ).toBe(204);
    expect(await journal(mock.origin, authorization)).toEqual([]);
  });

  it('answers the journal without a credential 401 and other methods 405, in the dialect', async () => {
    const anonymous = await call(new URL(`${mock.origin}/__mock/requests`), 'GET');
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toEqual({ message: 'token is required', url: `${mock.origin}/api/swagger` });
    const post = await call(new URL(`${mock.origin}/__mock/requests`), 'POST', {
      headers: { authorization: credential() },
    });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, DELETE');
  });

  it.each([
    ['delay=60001', 'Prefer: delay must be whole milliseconds from 0 to 60000, not "60001"'],
    ['delay=-1', 'Prefer: delay must be whole milliseconds from 0 to 60000, not "-1"'],
    ['fault=500', 'Prefer: fault must be reset, 502, 503, 504 or none, not "500"'],
  ])('refuses Prefer: %s with 400 naming what it takes', async (prefer, message) => {
    const answer = await timed(`${mock.baseUrl}${KEY}`, { authorization: credential(), prefer });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ message });
  });
});

describe('a held request with a body', () => {
  it('has its body read while it is held, so the delay leaves the client its whole time to send it', async () => {
    const mock = await createAnsweringMock({ sandbox: {} }, () => 'http://127.0.0.1/api/swagger');
    try {
      let firstRead: number | undefined;
      // No queue: the stream is pulled only when the mock reads the body.
      const file = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            firstRead ??= performance.now();
            controller.enqueue(new TextEncoder().encode('the notes of the release'));
            controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      const response = await mock.app.fetch(
        new Request('http://127.0.0.1/api/v1/repos/acme/rocket/releases/14001/assets?name=notes.txt', {
          method: 'POST',
          headers: { authorization: credential(), prefer: 'delay=1500', 'content-type': 'text/plain' },
          body: file,
          duplex: 'half',
        } as RequestInit),
      );
      const answered = performance.now();
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({ name: 'notes.txt', size: 24 });
      expect(firstRead).toBeDefined();
      // Read at the start of the hold, not after it: most of the 1.5 s lies between the read and the answer.
      expect(answered - firstRead!).toBeGreaterThan(1000);
    } finally {
      await mock.close();
    }
  });
});

describe('the sandbox, in process', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, sandbox: {} });
  });
  afterAll(() => mock.close());

  const rename = (authorization: string, prefer: string, name: string) =>
    timed(
      `${mock.baseUrl}/admin/users/bob/rename`,
      { authorization, prefer, 'content-type': 'application/json' },
      'POST',
      Buffer.from(JSON.stringify({ new_username: name })),
    );
  const members = async (authorization: string): Promise<string[]> =>
    (
      JSON.parse((await timed(`${mock.baseUrl}/teams/12001/members`, { authorization })).body) as { login: string }[]
    ).map(({ login }) => login);

  it('a write that faulted did not happen; one that was held happened once answered', async () => {
    const authorization = credential();
    for (const fault of ['503', '502', '504'])
      expect((await rename(authorization, `fault=${fault}`, 'robert')).status).toBe(Number(fault));
    expect(
      await failureOf(`${mock.baseUrl}/admin/users/bob/rename`, { authorization, prefer: 'fault=reset' }, 'POST'),
    ).toBe('ECONNRESET');
    expect(await members(authorization)).toEqual(['alice', 'bob', 'carol']);

    const held = await rename(authorization, 'delay=300', 'robert');
    expect(held.status).toBe(204);
    expect(held.ms).toBeGreaterThanOrEqual(300);
    expect(await members(authorization)).toEqual(['alice', 'robert', 'carol']);
    expect(
      (await journal(mock.origin, authorization)).map(({ operationId, status }) => `${operationId} ${status}`),
    ).toEqual([
      'adminRenameUser 503',
      'adminRenameUser 502',
      'adminRenameUser 504',
      'adminRenameUser null',
      'orgListTeamMembers 200',
      'adminRenameUser 204',
      'orgListTeamMembers 200',
    ]);
  });
});

describe('dynamic data, in process', () => {
  it('holds, faults and records as the examples do', async () => {
    const mock = await startMockServer({ port: 0, dynamic: true, seed: '5' });
    try {
      const authorization = credential();
      const held = await timed(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'delay=250' });
      expect(held.status).toBe(200);
      expect(held.ms).toBeGreaterThanOrEqual(250);
      expect((await timed(`${mock.baseUrl}${KEY}`, { authorization, prefer: 'fault=504' })).status).toBe(504);
      expect((await journal(mock.origin, authorization)).map(({ status, delay }) => [status, delay])).toEqual([
        [200, 250],
        [504, 0],
      ]);
    } finally {
      await mock.close();
    }
  });
});

describe('the proxy, in process', () => {
  let upstream: MockServer;
  let proxy: MockServer;
  beforeAll(async () => {
    upstream = await startMockServer({ port: 0 });
    proxy = await startMockServer({ port: 0, proxy: { upstream: upstream.origin } });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  it('holds answers, faults before the upstream sees the request, and keeps its own journal', async () => {
    const authorization = credential();
    const held = await timed(`${proxy.baseUrl}${KEY}`, { authorization, prefer: 'delay=300' });
    expect(held.status).toBe(200);
    expect(held.ms).toBeGreaterThanOrEqual(300);
    const maintenance = await timed(`${proxy.baseUrl}${KEY}`, { authorization, prefer: 'fault=503' });
    expect([maintenance.status, maintenance.headers['retry-after'], maintenance.body]).toEqual([
      503,
      '1',
      'Service Unavailable',
    ]);
    expect(await failureOf(`${proxy.baseUrl}${KEY}`, { authorization, prefer: 'fault=reset' })).toBe('ECONNRESET');
    const bad = await timed(`${proxy.baseUrl}${KEY}`, { authorization, prefer: 'delay=soon' });
    expect(bad.status).toBe(400);

    expect(
      (await journal(proxy.origin, authorization)).map(({ operationId, status, delay, fault }) => [
        operationId,
        status,
        delay,
        fault,
      ]),
    ).toEqual([
      ['repoGetKey', 200, 300, null],
      ['repoGetKey', 503, 0, 503],
      ['repoGetKey', null, 0, 'reset'],
      ['repoGetKey', 400, 0, null],
    ]);
    // Only the held request reached the upstream (which held it too: Prefer passes through unchanged).
    expect((await journal(upstream.origin, authorization)).map(({ status, delay }) => [status, delay])).toEqual([
      [200, 300],
    ]);
  });
});

describe('gitea-mock --latency --faults --seed (the built bin)', () => {
  /** Twelve requests at once to `baseUrl`: each answer's status (or `reset`) and time, and the journal's draws. */
  async function together(baseUrl: string): Promise<string[]> {
    const authorization = credential();
    const answers = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const begun = performance.now();
        const status = await call(new URL(`${baseUrl}${KEY}`), 'GET', { headers: { authorization } }).then(
          (answer) => answer.status,
          () => 'reset',
        );
        return { status, ms: performance.now() - begun };
      }),
    );
    for (const { ms } of answers) expect(ms).toBeGreaterThanOrEqual(250);
    const statuses = answers.map(({ status }) => status);
    expect(statuses).toContain(200);
    expect(statuses.filter((status) => status !== 200).length).toBeGreaterThan(0);
    expect(statuses.every((status) => [200, 503, 'reset'].includes(status))).toBe(true);
    const entries = await journal(new URL(baseUrl).origin, authorization);
    expect(entries).toHaveLength(12);
    for (const { delay } of entries) expect(delay >= 250 && delay <= 300).toBe(true);
    // Which request drew which is the order of arrival; what was drawn is the seed's.
    return entries.map(({ delay, fault }) => `${delay} ${fault}`).sort();
  }

  it('holds every answer within the range, faults a share of requests, and repeats both for a seed', async () => {
    const seed = 'conditions-7';
    const args = ['--port', '0', '--quiet', '--latency', '250-300', '--faults', '0.5:503,reset', '--seed', seed];
    const bin = await launch(process.execPath, [CLI, ...args]);
    let drawn: string[];
    try {
      expect(bin.output()).toContain(`(examples, latency 250-300 ms, faults 0.5:503,reset, seed ${seed})`);
      drawn = await together(bin.baseUrl);
    } finally {
      expect(await bin.stop()).toBe(0);
    }
    // The same options in process draw the same.
    const again = await startMockServer({
      port: 0,
      latency: [250, 300],
      faults: { rate: 0.5, kinds: [503, 'reset'] },
      seed,
    });
    try {
      expect(await together(again.baseUrl)).toEqual(drawn);
    } finally {
      await again.close();
    }
  });

  it.each([
    [['--latency', '300-250'], 'invalid --latency "300-250"'],
    [['--faults', '0.1:500'], 'invalid --faults "0.1:500"'],
    [['--max-held', '0'], 'invalid --max-held "0"'],
    [['--max-held', '4', '--max-held-per-credential', '5'], '--max-held-per-credential 5 is more than --max-held 4'],
    [['--max-body-bytes-in-flight', '1T'], 'invalid --max-body-bytes-in-flight "1T"'],
  ])('refuses %j with the usage and exit code 2', async (args, message) => {
    const child = execFile(process.execPath, [CLI, ...args]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('Usage: gitea-mock');
  });
});

describe('gitea-mock --max-held --max-held-per-credential (the built bin)', () => {
  it("a credential that holds its ceiling of delayed requests is refused its next at once, and another credential's requests are answered", async () => {
    const bin = await launch(process.execPath, [
      CLI,
      ...['--port', '0', '--quiet', '--max-held', '6', '--max-held-per-credential', '3'],
    ]);
    const [alice, bob, carol] = [credential(), credential(), credential()];
    const open: ReturnType<typeof leavable>[] = [];
    const held = (authorization: string): Promise<Reply | 'left'> => {
      const request = leavable(`${bin.baseUrl}${KEY}`, { authorization, ...HELD });
      open.push(request);
      return request.answer;
    };
    /** The first of `answers` to come, which is the refusal: its status, `Retry-After` and message. */
    const refusal = async (answers: Promise<Reply | 'left'>[], what: string): Promise<unknown[]> => {
      const { value } = await firstSettled(answers, what);
      if (value === 'left') throw new Error(`the connection closed before ${what}`);
      expect(value.body).not.toContain(alice.slice('token '.length));
      return [value.status, value.headers['retry-after'], JSON.parse(value.body).message];
    };
    try {
      // Four at once from one credential: three are held, the fourth is refused without waiting.
      expect(
        await refusal(
          Array.from({ length: 4 }, () => held(alice)),
          "a refusal of alice's fourth delayed request",
        ),
      ).toEqual([
        429,
        '1',
        'this credential has 3 requests held for a delay, as many as the mock holds for one; try again shortly',
      ]);
      // Another credential is answered, delayed or not.
      expect(
        (await call(new URL(`${bin.baseUrl}${KEY}`), 'GET', { headers: { authorization: bob, prefer: 'delay=1' } }))
          .status,
      ).toBe(200);
      expect((await call(new URL(`${bin.baseUrl}${KEY}`), 'GET', { headers: { authorization: bob } })).status).toBe(
        200,
      );
      // In all: three more held fill the six, and the request past them is refused 503, whoever sent it.
      expect(
        await refusal([held(bob), held(bob), held(carol), held(carol)], 'a refusal of the seventh delayed request'),
      ).toEqual([503, '1', 'the mock holds 6 requests for a delay, as many as it holds at once; try again shortly']);
      // A request without a delay is not held, and is answered: the connections are far from their ceiling.
      expect(
        (await call(new URL(`${bin.baseUrl}${KEY}`), 'GET', { headers: { authorization: credential() } })).status,
      ).toBe(200);
      // The refusal is in the journal, as not held.
      expect((await journal(new URL(bin.baseUrl).origin, alice)).map(({ status, delay }) => [status, delay])).toEqual([
        [429, 0],
      ]);
      // Requests whose clients leave give their places back.
      for (const request of open) request.leave();
      let again: Reply | undefined;
      for (let tries = 0; tries < 200 && again?.status !== 200; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        again = await call(new URL(`${bin.baseUrl}${KEY}`), 'GET', {
          headers: { authorization: alice, prefer: 'delay=1' },
        });
      }
      expect(again?.status).toBe(200);
    } finally {
      for (const request of open) request.leave();
      await bin.stop();
    }
  });
});

describe('gitea-mock proxy --max-held --max-held-per-credential (the built bin)', () => {
  it('holds under the same ceilings: a credential past its own is refused at once, and another is answered through the upstream', async () => {
    const upstream = await startMockServer({ port: 0 });
    const proxy = await launch(process.execPath, [
      CLI,
      ...['proxy', upstream.origin, '--port', '0', '--quiet', '--max-held', '4', '--max-held-per-credential', '2'],
    ]);
    const alice = credential();
    const open = Array.from({ length: 3 }, () => leavable(`${proxy.baseUrl}${KEY}`, { authorization: alice, ...HELD }));
    try {
      const { value } = await firstSettled(
        open.map(({ answer }) => answer),
        "a refusal of alice's third delayed request",
      );
      if (value === 'left') throw new Error('the proxy closed a held request');
      expect([value.status, value.headers['retry-after'], JSON.parse(value.body).message]).toEqual([
        429,
        '1',
        'this credential has 2 requests held for a delay, as many as the mock holds for one; try again shortly',
      ]);
      expect(
        (await call(new URL(`${proxy.baseUrl}${KEY}`), 'GET', { headers: { authorization: credential() } })).status,
      ).toBe(200);
    } finally {
      for (const request of open) request.leave();
      await proxy.stop();
      await upstream.close();
    }
  });
});

describe('a ceiling on held requests that is not below the connections', () => {
  it('is refused before the server starts', async () => {
    await expect(startMockServer({ port: 0, maxHeld: 1_000_000 })).rejects.toThrow(
      /^maxHeld \(--max-held\) 1000000 must be fewer than the \d+ connections this server keeps open/,
    );
  });
});

describe('the MSW handlers with held-request ceilings', () => {
  it('refuse a credential its delayed request past its ceiling at once, and answer another', async () => {
    const mock = createGiteaHandlers({ baseUrl: 'https://gitea.test/api/v1', maxHeld: 4, maxHeldPerCredential: 2 });
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledRequest: 'bypass' });
    const leaving = new AbortController();
    try {
      const url = `https://gitea.test/api/v1${KEY}`;
      const held = (authorization: string): Promise<Response | 'left'> =>
        fetch(url, { headers: { authorization, ...HELD }, signal: leaving.signal }).catch(() => 'left' as const);
      const alice = credential();
      const first = await firstSettled(
        [held(alice), held(alice), held(alice)],
        "a refusal of alice's third delayed request",
      );
      const refused = first.value as Response;
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '1']);
      const other = await fetch(url, { headers: { authorization: credential(), prefer: 'delay=1' } });
      expect(other.status).toBe(200);
    } finally {
      leaving.abort();
      server.close();
      await mock.close();
    }
  });
});
