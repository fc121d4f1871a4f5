// Retries and timeouts against a loopback server that resets, stalls and answers 429/503.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createGzip } from 'node:zlib';
import { ApiError, createGiteaClient, TimeoutError, unwrap } from '../../src/index.js';
import { retryAfterMs } from '../../src/transport.js';
import { type Handler, json, raw, reset, stall, startFaultServer, useFaultServer } from '../support/fault-server.js';

const fault = useFaultServer();

const fast = { retries: 2, baseDelayMs: 1 };
const client = (options: Partial<Parameters<typeof createGiteaClient>[0]> = {}) =>
  createGiteaClient({ baseUrl: fault.current.baseUrl, auth: { token: 'tok-9f8e7d6c5b4a' }, retry: fast, ...options });
const keyPath = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } } as const;
const KEY = { id: 11001, title: 'ci-runner' };

describe('retries of idempotent requests', () => {
  it('re-sends a GET after a connection reset', async () => {
    fault.current.script(reset, json(200, KEY));
    await expect(unwrap(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath))).resolves.toEqual(KEY);
    expect(fault.current.received).toHaveLength(2);
  });

  it.each([429, 502, 503, 504])('re-sends a GET after %i', async (status) => {
    fault.current.script(json(status, { message: 'busy', url: 'x' }), json(200, KEY));
    await expect(unwrap(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath))).resolves.toEqual(KEY);
    expect(fault.current.received).toHaveLength(2);
  });

  it('re-sends a PUT with the same body', async () => {
    fault.current.script(json(503, {}), raw(204, ''));
    await unwrap(
      client().PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
        params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
        body: { permission: 'read' },
      }),
    );
    expect(fault.current.received.map((r) => [r.method, r.body.toString()])).toEqual([
      ['PUT', '{"permission":"read"}'],
      ['PUT', '{"permission":"read"}'],
    ]);
  });

  it('gives up after the configured retries and returns the last answer', async () => {
    fault.current.script(
      json(503, { message: 'one' }),
      json(503, { message: 'two' }),
      json(503, { message: 'three' }),
      json(200, KEY),
    );
    const result = await client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    expect(result.response.status).toBe(503);
    expect(result.error).toEqual({ message: 'three' });
    expect(fault.current.received).toHaveLength(3);
    fault.current.received.length = 0;
    await client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath); // drain the queued 200
  });

  it('throws the network error when every attempt is reset', async () => {
    fault.current.script(reset, reset, reset);
    await expect(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath)).rejects.toThrow(TypeError);
    expect(fault.current.received).toHaveLength(3);
  });

  it('does not retry with retry: 0', async () => {
    fault.current.script(json(503, {}));
    const result = await client({ retry: 0 }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    expect(result.response.status).toBe(503);
    expect(fault.current.received).toHaveLength(1);
  });

  it('never re-sends a POST or a PATCH on its own', async () => {
    fault.current.script(json(503, {}), reset);
    const post = await client().POST('/repos/migrate', {
      body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'launchpad' },
    });
    expect(post.response.status).toBe(503);
    await expect(
      client().PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } },
        body: { active: true },
      }),
    ).rejects.toThrow(TypeError);
    expect(fault.current.received.map((r) => r.method)).toEqual(['POST', 'PATCH']);
  });

  it('takes Infinity retries: re-sends until an answer that is not worth another try', async () => {
    fault.current.script(json(503, {}), reset, json(429, {}), json(502, {}), json(200, KEY));
    await expect(
      unwrap(
        client({ retry: { retries: Number.POSITIVE_INFINITY, baseDelayMs: 1 } }).GET(
          '/repos/{owner}/{repo}/keys/{id}',
          keyPath,
        ),
      ),
    ).resolves.toEqual(KEY);
    expect(fault.current.received).toHaveLength(5);
  });

  it.each([
    // Number(process.env.RETRIES) with the variable unset: NaN once meant retrying for ever.
    ['NaN', Number.NaN, 'retry is not a number of retries (0 for none)'],
    ['-1', -1, 'retry is not a number of retries (0 for none)'],
    ['"2"', '2', 'retry is not a number of retries (0 for none)'],
    ['{ retries: NaN }', { retries: Number.NaN }, 'retry.retries is not a number of retries (0 for none)'],
    ['{ maxDelayMs: -1 }', { maxDelayMs: -1 }, 'retry.maxDelayMs is not a number of milliseconds'],
    ['{ baseDelayMs: "250" }', { baseDelayMs: '250' }, 'retry.baseDelayMs is not a number of milliseconds'],
    ['{ methods: "POST" }', { methods: 'POST' }, 'retry.methods is not a list of method names'],
    ['{ methods: ["GET", 1] }', { methods: ['GET', 1] }, 'retry.methods is not a list of method names'],
  ])('refuses retry %s with a TypeError, before anything is sent', (_case, retry, message) => {
    expect(() => client({ retry: retry as never })).toThrow(new TypeError(message));
    expect(fault.current.received).toHaveLength(0);
  });

  it('reads method names in any case', async () => {
    fault.current.script(json(503, {}), json(201, { id: 3002 }));
    const optedIn = client({ retry: { ...fast, methods: ['post'] } });
    await expect(
      unwrap(
        optedIn.POST('/repos/migrate', {
          body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'launchpad' },
        }),
      ),
    ).resolves.toEqual({ id: 3002 });
  });

  it('re-sends a POST when the caller opts in', async () => {
    fault.current.script(json(503, {}), json(201, { id: 3002 }));
    const optedIn = client({ retry: { ...fast, methods: ['POST'] } });
    await expect(
      unwrap(
        optedIn.POST('/repos/migrate', {
          body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'launchpad' },
        }),
      ),
    ).resolves.toEqual({ id: 3002 });
    expect(fault.current.received.map((r) => r.body.toString())).toEqual([
      '{"clone_addr":"https://git.example.net/a.git","repo_name":"launchpad"}',
      '{"clone_addr":"https://git.example.net/a.git","repo_name":"launchpad"}',
    ]);
  });

  it('re-sends without waiting on the cancel of the answer it drops, which MSW 2 never settles', async () => {
    const answers = [
      // A body whose cancel never settles, as the body of an answer MSW 2 mocks.
      new Response(new ReadableStream({ cancel: () => new Promise<void>(() => {}) }), { status: 503 }),
      Response.json(KEY),
    ];
    const gitea = createGiteaClient({
      baseUrl: 'https://gitea.example.org/api/v1',
      auth: { token: 'tok-9f8e7d6c5b4a' },
      retry: fast,
      fetch: async () => answers.shift()!,
    });
    await expect(unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', keyPath))).resolves.toEqual(KEY);
    expect(answers).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('waits the seconds Retry-After asks for before the retry', async () => {
    fault.current.script(json(429, { message: 'slow down' }, { 'retry-after': '1' }), json(200, KEY));
    const started = Date.now();
    await unwrap(client({ retry: { retries: 1, baseDelayMs: 1 } }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath));
    // The wait happened (a lower bound only: how fast a machine is never fails this).
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('returns the 429 instead of waiting longer than maxDelayMs', async () => {
    fault.current.script(json(429, { message: 'come back in an hour' }, { 'retry-after': '3600' }));
    const result = await client({ retry: { retries: 2, maxDelayMs: 2000 } }).GET(
      '/repos/{owner}/{repo}/keys/{id}',
      keyPath,
    );
    expect(result.response.status).toBe(429);
    expect(fault.current.received).toHaveLength(1);
  });

  it('reads seconds and HTTP dates; no wait (past, zero, negative, unreadable) is NaN, the back-off', () => {
    const now = Date.parse('2026-05-04T10:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs('Mon, 04 May 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Mon, 04 May 2026 09:00:00 GMT', now)).toBeNaN();
    // Date.parse reads "-5" as the year −5.
    expect(retryAfterMs('-5', now)).toBeNaN();
    expect(retryAfterMs('0', now)).toBeNaN();
    expect(retryAfterMs('soon', now)).toBeNaN();
    expect(retryAfterMs(null, now)).toBeNaN();
  });

  it.each(['-5', 'Thu, 01 Jan 1970 00:00:00 GMT', '0', 'soon'])(
    'backs off on Retry-After: %s instead of re-sending at once',
    async (value) => {
      // A server of its own, closed after: a retry on the wire when the timeout fires would
      // otherwise reach the shared one late and take the next test's answer.
      const busy = await startFaultServer();
      try {
        // It once waited 0 ms: with retries for ever, hundreds of requests a second.
        busy.script(...Array.from({ length: 500 }, () => json(503, { message: 'busy' }, { 'retry-after': value })));
        const call = client({
          baseUrl: busy.baseUrl,
          retry: { retries: Number.POSITIVE_INFINITY, baseDelayMs: 100 },
          timeoutMs: 2_000,
        }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
        await expect(call).rejects.toBeInstanceOf(TimeoutError);
        // The back-off waits at least 50, 100, 200, 400 … ms (half of 100 ms, doubled each time): in
        // 2 s at most six requests go out, and ten would take 25 s, so a timeout that fires late on a
        // busy machine still keeps the count far below the thousands a 0 ms wait sends. At least one
        // retry went out: the first answer has 2 s to come, which a loaded machine meets.
        expect(busy.received.length).toBeGreaterThanOrEqual(2);
        expect(busy.received.length).toBeLessThanOrEqual(10);
      } finally {
        await busy.close();
      }
    },
  );
});

describe('timeouts', () => {
  it('sets none unless asked: fetch gets no signal, so a slow answer is waited for', async () => {
    const signals: (AbortSignal | null | undefined)[] = [];
    const spy: typeof fetch = (input, init) => {
      signals.push(init?.signal);
      return fetch(input, init);
    };
    fault.current.script((req, res, body) => setTimeout(() => json(200, KEY)(req, res, body), 300));
    await expect(unwrap(client({ fetch: spy }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath))).resolves.toEqual(KEY);
    await unwrap(client({ fetch: spy, timeoutMs: 5_000 }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath));
    expect(signals[0]).toBeUndefined();
    expect(signals[1]).toBeInstanceOf(AbortSignal);
  });

  it("takes a call's timeoutMs over the client's, 0 turning it off for that call", async () => {
    fault.current.script(stall);
    const timed = client({ timeoutMs: 10_000, retry: 0 });
    await expect(timed.GET('/repos/{owner}/{repo}/keys/{id}', { ...keyPath, timeoutMs: 150 })).rejects.toThrow(
      'GET /repos/{owner}/{repo}/keys/{id} timed out after 150 ms',
    );
    fault.current.script((req, res, body) => setTimeout(() => json(200, KEY)(req, res, body), 400));
    await expect(
      unwrap(client({ timeoutMs: 100 }).GET('/repos/{owner}/{repo}/keys/{id}', { ...keyPath, timeoutMs: 0 })),
    ).resolves.toEqual(KEY);
  });

  it('takes a timeout beyond the longest timer (2^31 ms) as none, not as an instant one', async () => {
    // Runtimes fire a longer timer at once.
    fault.current.script((req, res, body) => setTimeout(() => json(200, KEY)(req, res, body), 50));
    await expect(
      unwrap(client({ timeoutMs: 2 ** 32 }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath)),
    ).resolves.toEqual(KEY);
  });

  it('refuses a timeout that is not a number of milliseconds, before anything is sent', async () => {
    for (const timeoutMs of [-1, Number.NaN, '100'] as number[]) {
      expect(() => client({ timeoutMs })).toThrow(
        new TypeError('timeoutMs is not a number of milliseconds (0 for none)'),
      );
      await expect(client().GET('/repos/{owner}/{repo}/keys/{id}', { ...keyPath, timeoutMs })).rejects.toThrow(
        new TypeError('init.timeoutMs is not a number of milliseconds (0 for none)'),
      );
    }
    expect(fault.current.received).toHaveLength(0);
  });

  it('reports a stalled answer as a TimeoutError naming the request', async () => {
    fault.current.script(stall);
    const call = client({ timeoutMs: 150, retry: 0 }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    await expect(call).rejects.toThrow(TimeoutError);
    await expect(call).rejects.toThrow('GET /repos/{owner}/{repo}/keys/{id} timed out after 150 ms');
  });

  it('times out a stalled answer with middleware on, even once the copy of the request is garbage-collected', async () => {
    // A real Request with a body is sent as a copy while a retry may follow, and Node 20's fetch
    // stops following a copy's signal once the copy is collected: the call hung past its timeout.
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    fault.current.script(stall);
    const withMiddleware = client({ timeoutMs: 300 });
    withMiddleware.use({ onRequest: () => undefined });
    const call = withMiddleware.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
      params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
      body: { permission: 'read' },
    });
    setTimeout(collectGarbage, 100);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
  }, 10_000);

  it('counts retries inside the same timeout', async () => {
    fault.current.script(json(503, {}), stall);
    // The retry goes out long before the timeout, however busy the machine; the stall then spends it.
    await expect(client({ timeoutMs: 2_000 }).GET('/repos/{owner}/{repo}/keys/{id}', keyPath)).rejects.toBeInstanceOf(
      TimeoutError,
    );
    expect(fault.current.received).toHaveLength(2);
  });

  it("composes with the caller's AbortSignal: the caller's abort is not a timeout", async () => {
    fault.current.script(stall);
    const controller = new AbortController();
    const call = client({ timeoutMs: 10_000 }).GET('/repos/{owner}/{repo}/keys/{id}', {
      ...keyPath,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    const error = await call.catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect((error as Error).name).toBe('AbortError');
  });

  it('stops waiting between retries when the caller aborts', async () => {
    fault.current.script(json(503, {}, { 'retry-after': '5' }));
    const controller = new AbortController();
    const call = client({ retry: { retries: 1, maxDelayMs: 10_000 } }).GET('/repos/{owner}/{repo}/keys/{id}', {
      ...keyPath,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(fault.current.received).toHaveLength(1);
  });
});

describe('maxBodyBytes', () => {
  const server = useFaultServer();
  /** `mib` MiB of spaces, gzipped a MiB at a time: about a thousandth of its size on the wire. */
  const bomb = async (mib: number): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    const gzip = createGzip({ level: 1 });
    gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => gzip.on('end', resolve));
    const mebibyte = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < mib; i++)
      if (!gzip.write(mebibyte)) await new Promise((resolve) => gzip.once('drain', resolve));
    gzip.end();
    await ended;
    return Buffer.concat(chunks);
  };
  const gzipped =
    (payload: Buffer): Handler =>
    (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': payload.length,
      });
      res.end(payload);
    };

  it('stops reading an answer that inflates past 64 MiB by default, with an ApiError of its status', async () => {
    const payload = await bomb(80);
    expect(payload.length).toBeLessThan(1024 * 1024);
    server.current.script(gzipped(payload));
    const gitea = createGiteaClient({ baseUrl: server.current.baseUrl, auth: { token: 't0ken-value' }, retry: 0 });
    const error = await unwrap(gitea.GET('/admin/orgs')).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).status, (error as ApiError).message]).toEqual([
      200,
      "GET /admin/orgs (adminGetAllOrgs): 200 the answer's body is larger than maxBodyBytes (67108864 bytes); not read",
    ]);
  });

  it('takes a bound of its own, Infinity for none, and refuses anything but a number ≥ 0', async () => {
    const small = await bomb(2);
    server.current.script(gzipped(small), gzipped(small));
    const bounded = createGiteaClient({ baseUrl: server.current.baseUrl, retry: 0, maxBodyBytes: 1024 * 1024 });
    await expect(bounded.GET('/admin/orgs')).rejects.toThrow(/larger than maxBodyBytes \(1048576 bytes\)/);
    const unbounded = createGiteaClient({ baseUrl: server.current.baseUrl, retry: 0, maxBodyBytes: Infinity });
    // Two MiB of spaces is no JSON, but it was read to its end.
    await expect(unbounded.GET('/admin/orgs')).rejects.toThrow(/unreadable JSON/);
    expect(() => createGiteaClient({ baseUrl: server.current.baseUrl, maxBodyBytes: Number.NaN })).toThrow(
      new TypeError('maxBodyBytes is not a number of bytes'),
    );
  });
});
