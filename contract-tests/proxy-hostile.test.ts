// `gitea-mock proxy` against hostile peers on loopback, as an attacker would try it: upstreams
// that send what Node cannot write, cut or trickle their answers; clients that smuggle a second
// request inside a body, trickle their uploads, or call from another origin's page. The proxy
// stays up and answers, forwards exactly one request per request, frames and relays headers as
// sent, ends every stream within its bounds, and keeps credentials and cookies where they belong.
import { request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer, type MockOptions } from '../mock/src/server.js';
import { call } from './support/call.js';
import { exchangeRaw } from './support/http.js';
import { close, listen, rawUpstream, type RawUpstream } from './support/upstream.js';

type ProxyExtra = Omit<NonNullable<MockOptions['proxy']>, 'upstream' | 'onViolations'>;

async function proxyTo(upstream: string, extra: ProxyExtra = {}): Promise<{ proxy: MockServer; lines: string[] }> {
  const lines: string[] = [];
  const proxy = await startMockServer({
    port: 0,
    proxy: { upstream, onViolations: (line) => lines.push(line), ...extra },
  });
  return { proxy, lines };
}

/** Runs `test` against a proxy to a raw upstream that answers with `answer`; both stop after, whatever happens. */
async function throughRaw(
  answer: Parameters<typeof rawUpstream>[0],
  extra: ProxyExtra,
  test: (proxy: MockServer, upstream: RawUpstream) => Promise<void>,
): Promise<void> {
  const upstream = await rawUpstream(answer);
  const { proxy } = await proxyTo(upstream.origin, extra);
  try {
    await test(proxy, upstream);
  } finally {
    await proxy.close();
    await upstream.close();
  }
}

const ORGS =
  'HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=utf-8\r\nX-Total-Count: 0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]';
const hostOf = (origin: string): string => origin.slice('http://'.length);

/** A request through node:http that resolves however it ends: the status, the bytes that came, and whether the body ended whole. */
function attempt(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: (req: ReturnType<typeof request>) => void } = {},
): Promise<{ status: number; body: Buffer; whole: boolean; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let headers: IncomingMessage['headers'] = {};
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      status = res.statusCode ?? 0;
      headers = res.headers;
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status, body: Buffer.concat(chunks), whole: res.complete, headers }));
      res.on('error', () => resolve({ status, body: Buffer.concat(chunks), whole: false, headers }));
    });
    req.on('error', () => resolve({ status, body: Buffer.concat(chunks), whole: false, headers }));
    if (init.body) init.body(req);
    else req.end();
  });
}

describe('an upstream answer Node cannot write', () => {
  // Node's parser lets the first through, and `writeHead` refuses it; the second its parser refuses.
  const cases = [
    [
      'a DEL in the reason phrase',
      'HTTP/1.1 200 O\x7fK',
      'sent an answer that cannot be passed on: the reason phrase holds a character HTTP does not allow',
    ],
    ['a DEL in a header value', 'HTTP/1.1 200 OK\r\nX-Bad: a\x7fb', 'failed: HPE_INVALID_HEADER_TOKEN'],
  ] as const;
  let upstream: RawUpstream;
  let proxy: MockServer;
  let bad = '';
  beforeAll(async () => {
    upstream = await rawUpstream((socket, head) => {
      // The first request on each connection with `bad` set gets it; everything else a good answer.
      socket.end(
        bad && !head.includes('good')
          ? `${bad}\r\nContent-Type: application/json\r\nX-Total-Count: 0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]`
          : ORGS,
        'latin1',
      );
    });
    ({ proxy } = await proxyTo(upstream.origin));
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  it.each(
    cases.flatMap(([what, line, problem]) =>
      ['/api/v1/admin/orgs', '/favicon.ico'].map((path) => [what, path, line, problem] as const),
    ),
  )('%s, on %s: 502 naming the problem, and the proxy answers the next request', async (_what, path, line, problem) => {
    bad = line;
    const answer = await call(new URL(`${proxy.origin}${path}`), 'GET', {
      headers: { authorization: 'token tok_hostile_1' },
    });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body).message).toBe(`the upstream ${hostOf(upstream.origin)} ${problem}`);
    const next = await call(new URL(`${proxy.origin}${path}?good`), 'GET', {
      headers: { authorization: 'token tok_hostile_1' },
    });
    expect([next.status, next.body]).toEqual([200, '[]']);
  });
});

describe('request framing', () => {
  // The body a smuggler sends: a whole request of its own, which an upstream reading raw bytes
  // would take as the next request, with the next client's request as the asset's content.
  const SMUGGLED =
    'POST /api/v1/repos/acme/rocket/releases/14001/assets?name=loot HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n';
  const chunked = (text: string): string => `${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`;
  let upstream: { server: import('node:http').Server; origin: string };
  const received: { method: string; url: string; authorization: string | undefined; body: string }[] = [];
  beforeAll(async () => {
    upstream = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          method: req.method!,
          url: req.url!,
          authorization: req.headers.authorization,
          body: Buffer.concat(chunks).toString('latin1'),
        });
        res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '0' }).end('[]');
      });
    });
  });
  afterAll(() => close(upstream.server));

  it.each([
    ['GET', '/other'],
    ['GET', '/api/v1/admin/orgs'],
    ['DELETE', '/api/v1/repos/acme/rocket/issues/1/assignees'],
    ['OPTIONS', '/api/v1/admin/orgs'],
    ['HEAD', '/api/v1/admin/orgs'],
  ])(
    "%s %s with a chunked body holding a request: one request upstream, its body framed; the next client's request arrives whole",
    async (method, path) => {
      received.length = 0;
      const { proxy } = await proxyTo(upstream.origin);
      try {
        const victim =
          'GET /api/v1/admin/orgs HTTP/1.1\r\nHost: p\r\nAuthorization: token tok_VICTIM_77\r\nConnection: close\r\n\r\n';
        // Both on one client connection, the second after the first's answer: the proxy reuses its upstream connection.
        const first = await exchangeRaw(
          proxy.origin,
          `${method} ${path} HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(SMUGGLED)}`,
        );
        expect(first.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
        const second = await exchangeRaw(proxy.origin, victim);
        expect(second.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
        expect(received).toEqual([
          { method, url: path, authorization: undefined, body: SMUGGLED },
          { method: 'GET', url: '/api/v1/admin/orgs', authorization: 'token tok_VICTIM_77', body: '' },
        ]);
      } finally {
        await proxy.close();
      }
    },
  );

  it.each(['gzip, chunked', 'identity, chunked'])(
    'Transfer-Encoding: %s cannot be forwarded as sent: 400, nothing upstream, connection closed',
    async (coding) => {
      received.length = 0;
      const { proxy } = await proxyTo(upstream.origin);
      try {
        const answer = (
          await exchangeRaw(
            proxy.origin,
            `POST /other HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: ${coding}\r\n\r\n${chunked(SMUGGLED)}GET /again HTTP/1.1\r\nHost: p\r\n\r\n`,
          )
        ).toString('latin1');
        expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
        expect(answer).toContain('Connection: close\r\n');
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).message).toBe(
          `the request's Transfer-Encoding is "${coding}": the proxy forwards chunked alone or a Content-Length, so that the upstream reads the body as it was sent`,
        );
        expect(received).toEqual([]);
      } finally {
        await proxy.close();
      }
    },
  );

  it('a target the URL parser refuses (`//x:99999/`) is forwarded as sent, as any request outside the contract', async () => {
    received.length = 0;
    const { proxy, lines } = await proxyTo(upstream.origin);
    try {
      const answer = await exchangeRaw(proxy.origin, 'GET //x:99999/ HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n');
      expect(answer.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET //x:99999/']);
      expect(lines).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a client that leaves mid-upload: nothing of its request reaches the upstream', async () => {
    await throughRaw(
      () => {},
      {},
      async (proxy, upstream) => {
        await new Promise<void>((resolve) => {
          const req = request(`${proxy.origin}/upload`, {
            method: 'POST',
            headers: { 'content-length': '1000' },
            agent: false,
          });
          req.on('error', () => {});
          req.write('0123456789', () =>
            setTimeout(() => {
              req.destroy();
              resolve();
            }, 100),
          );
        });
        // The body is read before an upstream connection is taken: none was.
        await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);
        expect(upstream.received).toEqual([]);
      },
    );
  });
});

describe('headers as sent', () => {
  it("the answer's: names as written, duplicates, Latin-1 bytes; no hop-by-hop header, nor one Connection names", async () => {
    const answer =
      'HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=utf-8\r\nX-Total-Count: 0\r\nx-MiXeD-Case: a\r\nLink: <https://g/a>; rel="next"\r\nLink: <https://g/b>; rel="last"\r\nX-Latin: caf\xe9\r\nConnection: close, X-Secret-Hop\r\nX-Secret-Hop: s\r\nKeep-Alive: timeout=99\r\nContent-Length: 2\r\n\r\n[]';
    await throughRaw(
      (socket) => socket.end(answer, 'latin1'),
      {},
      async (proxy) => {
        for (const path of ['/api/v1/admin/orgs', '/elsewhere']) {
          const answer = (
            await exchangeRaw(
              proxy.origin,
              `GET ${path} HTTP/1.1\r\nHost: p\r\nAuthorization: token tok_h_1\r\nConnection: close\r\n\r\n`,
            )
          ).toString('latin1');
          const head = answer.slice(0, answer.indexOf('\r\n\r\n') + 2);
          expect(head).toContain(
            '\r\nx-MiXeD-Case: a\r\nLink: <https://g/a>; rel="next"\r\nLink: <https://g/b>; rel="last"\r\nX-Latin: caf\xe9\r\n',
          );
          expect(head).not.toMatch(/X-Secret-Hop|timeout=99/i);
        }
      },
    );
  });

  it("the request's too, with Host set to the upstream and no cookie", async () => {
    await throughRaw(
      (socket) => socket.end(ORGS, 'latin1'),
      {},
      async (proxy, upstream) => {
        await exchangeRaw(
          proxy.origin,
          'GET /elsewhere HTTP/1.1\r\nHost: p\r\nx-MiXeD-Req: a\r\nX-Dup: 1\r\nX-Dup: 2\r\nX-Latin: caf\xe9\r\nConnection: close, X-Hop-Req\r\nX-Hop-Req: s\r\nCookie: i_like_gitea=sess_SECRET\r\n\r\n',
        );
        const head = upstream.received[0]!.toString('latin1');
        expect(head).toMatch(
          /^GET \/elsewhere HTTP\/1\.1\r\nx-MiXeD-Req: a\r\nX-Dup: 1\r\nX-Dup: 2\r\nX-Latin: caf\xe9\r\nHost: 127\.0\.0\.1:\d+\r\n/,
        );
        expect(head).not.toMatch(/X-Hop-Req|Cookie|sess_SECRET/i);
      },
    );
  });
});

describe('streams end', () => {
  /** An upstream that declares 5000 bytes, sends 207, then resets the connection or falls silent. */
  const cut = (then: 'reset' | 'stall') => (socket: Socket) => {
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=utf-8\r\nX-Total-Count: 0\r\nContent-Length: 5000\r\n\r\n${'x'.repeat(207)}`,
      () => {
        if (then === 'reset') setTimeout(() => socket.resetAndDestroy(), 50);
      },
    );
  };

  it.each(['reset', 'stall'] as const)(
    'an answer cut short (%s) outside the contract: the client gets the bytes sent, then its connection ends',
    async (then) => {
      await throughRaw(cut(then), { timeoutMs: 300 }, async (proxy) => {
        const answer = await attempt(`${proxy.origin}/attachments/a`);
        expect([answer.status, answer.body.length, answer.whole]).toEqual([200, 207, false]);
      });
    },
  );

  it.each([
    ['reset', (host: string) => `the upstream ${host} failed: ECONNRESET`],
    ['stall', (host: string) => `the upstream ${host} sent nothing for 0.3 s`],
  ] as const)(
    'an answer cut short (%s) inside the contract, read to be checked: 502 or 504 before any byte',
    async (then, message) => {
      await throughRaw(cut(then), { timeoutMs: 300 }, async (proxy, upstream) => {
        const answer = await attempt(`${proxy.origin}/api/v1/admin/orgs`, {
          headers: { authorization: 'token tok_cut' },
        });
        expect([answer.status, JSON.parse(answer.body.toString()).message]).toEqual([
          then === 'reset' ? 502 : 504,
          message(hostOf(upstream.origin)),
        ]);
      });
    },
  );

  /** An upstream that trickles a chunked body, a byte every 50 ms, for ever. */
  const trickle = (socket: Socket): void => {
    socket.write(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=utf-8\r\nX-Total-Count: 0\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const timer = setInterval(() => socket.write('1\r\n \r\n'), 50);
    socket.on('close', () => clearInterval(timer));
  };

  it('a trickled answer inside the contract: 504 at the exchange bound, though the upstream is never silent', async () => {
    await throughRaw(trickle, { timeoutMs: 1_000, exchangeTimeoutMs: 600 }, async (proxy, upstream) => {
      const answer = await attempt(`${proxy.origin}/api/v1/admin/orgs`, {
        headers: { authorization: 'token tok_trickle' },
      });
      expect([answer.status, JSON.parse(answer.body.toString()).message]).toEqual([
        504,
        `the exchange with the upstream ${hostOf(upstream.origin)} took longer than 0.6 s`,
      ]);
      await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);
    });
  });

  it("a trickled answer outside the contract: relayed until the exchange bound, then the client's connection ends", async () => {
    await throughRaw(trickle, { timeoutMs: 1_000, exchangeTimeoutMs: 600 }, async (proxy, upstream) => {
      const answer = await attempt(`${proxy.origin}/attachments/slow`);
      expect([answer.status, answer.whole]).toEqual([200, false]);
      expect(answer.body.length).toBeGreaterThan(0);
      await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);
    });
  });

  /** A client that declares 1 MB and sends `bytes` of it, one every 50 ms, then stops. */
  const slowUpload = (bytes: number) => (req: ReturnType<typeof request>) => {
    let sent = 0;
    const timer = setInterval(() => (sent++ < bytes ? req.write('a') : clearInterval(timer)), 50);
    req.on('close', () => clearInterval(timer));
  };

  it.each([
    ['inside the contract', '/api/v1/repos/acme/rocket/releases/14001/assets'],
    ['outside it', '/api/packages/acme/generic/big/1/big.bin'],
  ])('a trickled upload %s: 408 at the exchange bound, and no upstream connection left', async (_where, path) => {
    await throughRaw(
      () => {},
      { timeoutMs: 1_000, exchangeTimeoutMs: 600 },
      async (proxy, upstream) => {
        const answer = await attempt(`${proxy.origin}${path}`, {
          method: 'POST',
          headers: {
            authorization: 'token tok_up',
            'content-type': 'application/octet-stream',
            'content-length': String(1024 * 1024),
          },
          body: slowUpload(Infinity),
        });
        expect([answer.status, JSON.parse(answer.body.toString()).message]).toEqual([
          408,
          'the request took longer than 0.6 s',
        ]);
        expect(answer.headers.connection).toBe('close');
        await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);
      },
    );
  });

  it('a stalled upload: 408 once the client is silent for the idle bound', async () => {
    await throughRaw(
      () => {},
      { timeoutMs: 300 },
      async (proxy, upstream) => {
        const answer = await attempt(`${proxy.origin}/upload`, {
          method: 'PUT',
          headers: { 'content-length': '1000' },
          body: slowUpload(3),
        });
        expect([answer.status, JSON.parse(answer.body.toString()).message]).toEqual([
          408,
          'the request body stalled: no byte for 0.3 s',
        ]);
        await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);
      },
    );
  });

  it('slow uploads take no upstream connection, and each ends at its bound', async () => {
    await throughRaw(
      () => {},
      { timeoutMs: 1_000, exchangeTimeoutMs: 800, upstreamConnections: 2 },
      async (proxy, upstream) => {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () =>
            attempt(`${proxy.origin}/upload`, {
              method: 'POST',
              headers: { 'content-length': '100000' },
              body: slowUpload(Infinity),
            }),
          ),
        );
        expect(upstream.peak()).toBe(0);
        expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(408));
      },
    );
  });
});

describe('secrets the upstream echoes', () => {
  it('never reach a line, the report or a header, in any case (property)', async () => {
    let echo = (text: string): string => text;
    const upstream = await listen((req, res) => {
      req.resume();
      const credential = echo(req.headers.authorization ?? '');
      // An undeclared media type, whose line quotes it lower-cased; the credential everywhere else too.
      res.writeHead(200, echo(credential), {
        'content-type': credential,
        'x-total-count': '0',
        'x-echo': credential,
        link: `<https://g/?token=${credential}>; rel="next"`,
      });
      res.end(JSON.stringify({ message: credential }));
    });
    const { proxy, lines } = await proxyTo(upstream.origin);
    try {
      const secret = fc.oneof(
        fc.stringMatching(/^[0-9a-f]{40}$/).map((token) => ({ authorization: `token ${token}`, secrets: [token] })),
        fc
          .tuple(fc.stringMatching(/^[a-z][a-z0-9]{2,10}$/), fc.stringMatching(/^[!-~]{8,24}$/))
          .map(([user, password]) => {
            const basic = Buffer.from(`${user}:${password}`).toString('base64');
            return { authorization: `Basic ${basic}`, secrets: [basic, password] };
          }),
      );
      const casing = fc.constantFrom<(text: string) => string>(
        (text) => text.toLowerCase(),
        (text) => text.toUpperCase(),
        (text) => text,
        (text) => [...text].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join(''),
      );
      await fc.assert(
        fc.asyncProperty(secret, casing, async ({ authorization, secrets }, transform) => {
          echo = transform;
          lines.length = 0;
          const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: { authorization } });
          expect(lines).toHaveLength(1);
          const shown = `${lines.join('\n')}\n${answer.headers['x-contract-violations']}`.toLowerCase();
          for (const value of secrets) expect(shown).not.toContain(value.toLowerCase());
        }),
        { numRuns: 40 },
      );
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });
});

describe('CORS and cookies in front of a real server', () => {
  let upstream: { server: import('node:http').Server; origin: string };
  const seen: { url: string; cookie: string | undefined }[] = [];
  beforeAll(async () => {
    upstream = await listen((req, res) => {
      req.resume();
      seen.push({ url: req.url!, cookie: req.headers.cookie });
      res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '0' }).end('[]');
    });
  });
  afterAll(() => close(upstream.server));

  const preflight = (origin: string) => ({
    origin,
    'access-control-request-method': 'GET',
    'access-control-request-headers': 'authorization',
  });

  it('answers pages of this machine and of corsOrigins; refuses any other origin with 403 and forwards nothing', async () => {
    seen.length = 0;
    const { proxy } = await proxyTo(upstream.origin, { corsOrigins: ['https://app.example.org'] });
    try {
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'https://app.example.org']) {
        const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'OPTIONS', { headers: preflight(origin) });
        expect([
          answer.status,
          answer.headers['access-control-allow-origin'],
          answer.headers['access-control-allow-credentials'],
        ]).toEqual([204, origin, 'true']);
      }
      for (const origin of [
        'https://evil.example',
        'null',
        'https://app.example.org.evil.example',
        'http://localhost.evil.example',
      ]) {
        const refused = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'OPTIONS', { headers: preflight(origin) });
        expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([403, undefined]);
        const request = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', {
          headers: {
            origin,
            cookie: 'i_like_gitea=sess_SECRET',
            authorization: 'token tok_cors',
          },
        });
        expect([request.status, request.headers['access-control-allow-origin']]).toEqual([403, undefined]);
        expect(JSON.parse(request.body).message).toBe(
          `the proxy answers browser pages of this machine and of --cors-origin only, not of ${JSON.stringify(origin)}`,
        );
      }
      expect(seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('exposes X-Contract-Violations to the pages it answers, beside Link and X-Total-Count, where it sends the header', async () => {
    const { proxy } = await proxyTo(upstream.origin);
    try {
      const origin = 'http://localhost:5173';
      const checked = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', {
        headers: {
          origin,
          authorization: 'token tok_expose',
        },
      });
      expect([checked.headers['access-control-expose-headers'], checked.headers['x-contract-violations']]).toEqual([
        'Link, X-Total-Count, X-Contract-Violations',
        '0',
      ]);
      // Outside the contract there is no count to read, nor to expose.
      const outside = await call(new URL(`${proxy.origin}/user/settings`), 'GET', { headers: { origin } });
      expect([outside.headers['access-control-expose-headers'], outside.headers['x-contract-violations']]).toEqual([
        'Link, X-Total-Count',
        undefined,
      ]);
      // Without Origin (not a browser's cross-origin request), no CORS header at all.
      expect(
        (await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: { authorization: 'token tok_expose' } }))
          .headers['access-control-expose-headers'],
      ).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  it('forwards Cookie only with forwardCookies', async () => {
    for (const forwardCookies of [false, true]) {
      seen.length = 0;
      const { proxy } = await proxyTo(upstream.origin, { forwardCookies });
      try {
        await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', {
          headers: {
            cookie: 'i_like_gitea=sess_SECRET',
            authorization: 'token tok_cookie',
          },
        });
        await call(new URL(`${proxy.origin}/user/settings`), 'GET', {
          headers: { cookie: 'i_like_gitea=sess_SECRET' },
        });
        expect(seen.map((request) => request.cookie)).toEqual(
          forwardCookies ? ['i_like_gitea=sess_SECRET', 'i_like_gitea=sess_SECRET'] : [undefined, undefined],
        );
      } finally {
        await proxy.close();
      }
    }
  });

  it('the mock without a real server behind it still answers every origin', async () => {
    const mock = await startMockServer({ port: 0 });
    try {
      const answer = await call(new URL(`${mock.baseUrl}/admin/orgs`), 'OPTIONS', {
        headers: preflight('https://evil.example'),
      });
      expect([answer.status, answer.headers['access-control-allow-origin']]).toEqual([204, 'https://evil.example']);
    } finally {
      await mock.close();
    }
  });
});
