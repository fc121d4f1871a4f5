// What a peer that means harm sends the mock, the proxy and live mode, replayed on loopback: each
// must stay up and answering, bounded, with an answer that says why, no secret in any line or
// report, and the verdict right. The sandbox's own bounds are in sandbox-hostile.test.ts, the
// front's against malformed HTTP in mock-hostile.test.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { call, type Reply } from './support/call.js';
import { exchangeRaw, firstSettled } from './support/http.js';
import { launch, type Launched } from './support/launch.js';
import { close, listen } from './support/upstream.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const { verify } = (await import(
  fileURLToPath(new URL('../mock/dist/verify.mjs', import.meta.url))
)) as typeof import('../mock/src/live/verify.js');
const { createGiteaHandlers } = (await import(
  fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url))
)) as typeof import('../mock/src/msw/handlers.js');

const TOKEN = 'tok_peer_0123456789abcdef0123456789abcdef';
const AUTH = { authorization: `token ${TOKEN}` };
const FILES = mkdtempSync(join(tmpdir(), 'gitea-contract-peer-'));
afterAll(() => rmSync(FILES, { recursive: true, force: true }));

/** Every run of eight characters of the token: none may show anywhere. */
const fragments = Array.from({ length: TOKEN.length - 7 }, (_, i) => TOKEN.slice(i, i + 8));
const expectNoToken = (text: string): void => {
  expect(fragments.filter((fragment) => text.includes(fragment))).toEqual([]);
};

/** The examples, in this process: answers that conform, to build an upstream's answers from. */
let examples: MockServer;
beforeAll(async () => {
  examples = await startMockServer({ port: 0 });
});
afterAll(async () => {
  await examples.close();
});
const example = async (path: string): Promise<any> =>
  JSON.parse((await call(new URL(`${examples.baseUrl}${path}`), 'GET', { headers: AUTH })).body);

/** A JSON POST of `body` to the mock at `base`. */
const post = (base: string, path: string, body: string) =>
  call(new URL(`${base}${path}`), 'POST', {
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: Buffer.from(body),
  });

/** `{"name":"a","redirect_uris":[1,1,…]}` with `count` numbers where strings are due. */
const wrongUris = (count: number): string => `{"name":"a","redirect_uris":[${'1,'.repeat(count - 1)}1]}`;

describe('1. a request whose every item breaks the document', () => {
  /** The built bin on a heap of 128 MiB: listing five million violations took gigabytes. */
  async function smallHeap(args: string[]): Promise<Launched> {
    return launch(process.execPath, ['--max-old-space-size=128', CLI, ...args, '--port', '0', '--quiet']);
  }

  for (const mode of [[], ['sandbox']]) {
    it(`the built bin${mode.length ? ' as the sandbox' : ''} on a 128 MiB heap: 413 to five million items, 422 naming 20 of 19,000 and counting the rest, and stays up`, async () => {
      const mock = await smallHeap(mode);
      try {
        const huge = await post(mock.baseUrl, '/user/applications/oauth2', wrongUris(5_000_000));
        expect([huge.status, JSON.parse(huge.body).message]).toEqual([
          413,
          'the request body holds more than 20000 JSON values, more than the mock reads',
        ]);
        const many = await post(mock.baseUrl, '/user/applications/oauth2', wrongUris(19_000));
        const { message } = JSON.parse(many.body);
        expect(many.status).toBe(422);
        expect(message.split('; ')).toHaveLength(21);
        expect(message).toMatch(
          /^body\.redirect_uris\.0: Request body property redirect_uris\.0 must be string; .*; and 18980 more$/,
        );
        expect((await call(new URL(`${mock.baseUrl}/version`), 'GET')).status).toBe(200);
        expect(mock.child.exitCode).toBeNull();
      } finally {
        await mock.stop();
      }
    });
  }

  it('the MSW handlers answer five million items 413 in the test process', async () => {
    const server = setupServer(...createGiteaHandlers({ baseUrl: 'https://gitea.test/api/v1' }).handlers);
    server.listen({ onUnhandledRequest: 'error' });
    try {
      const answer = await fetch('https://gitea.test/api/v1/user/applications/oauth2', {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: wrongUris(5_000_000),
      });
      expect(answer.status).toBe(413);
    } finally {
      server.close();
    }
  });
});

/** A proxy in this process in front of `upstream`, with the lines and warnings it wrote. */
async function proxyTo(upstream: string): Promise<{ proxy: MockServer; lines: string[]; warnings: string[] }> {
  const lines: string[] = [];
  const warnings: string[] = [];
  const proxy = await startMockServer({
    port: 0,
    onWarning: (line) => warnings.push(line),
    proxy: { upstream, onViolations: (line) => lines.push(line), onWarning: (line) => warnings.push(line) },
  });
  return { proxy, lines, warnings };
}

/** An upstream that answers every request with `answer`, JSON, with `headers`. */
const upstreamOf = (answer: Buffer | string, headers: Record<string, string> = {}) =>
  listen((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '1000', ...headers });
    res.end(answer);
  });

describe('2. the proxy checks a large answer in time linear in its problems', () => {
  it('a list of packages, each with a field the document lacks inside a "record or null": reported, and preflights answered meanwhile', async () => {
    const [record] = await example('/packages/acme/npm/rocket-sdk');
    const shiny = { ...record, repository: { ...record.repository, shiny_new_field: 1 } };
    for (const [count, expected] of [
      // Within what is checked whole: six named, the rest counted.
      [
        120,
        /: 120 violations: response body \/0\/repository\/shiny_new_field: unexpected field.*; response body: 114 more problems, not listed/,
      ],
      // Past it (about a megabyte): the first named, and the rest said to be not looked for.
      [
        1_500,
        /: 2 violations: response body \/0\/repository\/shiny_new_field: unexpected field.*more problems may follow/,
      ],
    ] as const) {
      const upstream = await upstreamOf(JSON.stringify(Array(count).fill(shiny)));
      const { proxy, lines, warnings } = await proxyTo(upstream.origin);
      try {
        const answer = call(new URL(`${proxy.baseUrl}/packages/acme/npm/rocket-sdk`), 'GET', { headers: AUTH });
        const preflight = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'OPTIONS', {
          headers: {
            origin: 'http://127.0.0.1:5173',
            'access-control-request-method': 'GET',
          },
        });
        expect(preflight.status).toBe(204);
        expect((await answer).status).toBe(200);
        expect(lines).toEqual([expect.stringMatching(expected)]);
        expect(warnings).toEqual([]);
      } finally {
        await proxy.close();
        await close(upstream.server);
      }
    }
  });
});

/** A GET's status, headers and body as bytes, none decoded. */
function bytesOf(
  url: URL,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe('3. the proxy checks compressed answers as the client reads them', () => {
  it('decodes gzip and br before the check, passes the bytes on unchanged, and leaves a bomb unchecked', async () => {
    const orgs = JSON.stringify(await example('/admin/orgs'));
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    for (const [encoding, bytes, violations] of [
      ['gzip', gzipSync(orgs), '0'],
      ['br', brotliCompressSync(orgs), '0'],
      ['gzip', gzipSync(`[{"id":"x"}${' '.repeat(100)}]`), '1'],
      // 64 MiB of spaces: decoded to the 10 MiB the proxy checks, then left unchecked.
      ['gzip', bomb, '0'],
    ] as const) {
      const upstream = await upstreamOf(bytes, { 'content-encoding': encoding });
      const { proxy, lines } = await proxyTo(upstream.origin);
      try {
        const answer = await bytesOf(new URL(`${proxy.baseUrl}/admin/orgs`), {
          ...AUTH,
          'accept-encoding': 'gzip, br',
        });
        expect([answer.status, answer.headers['x-contract-violations']]).toEqual([200, violations]);
        expect(answer.body.equals(bytes)).toBe(true);
        expect(lines.every((line) => !/not valid JSON/.test(line))).toBe(true);
      } finally {
        await proxy.close();
        await close(upstream.server);
      }
    }
  });
});

describe('4, 6, 7. an answer that echoes the token, or nests a value a million levels deep', () => {
  /** Organizations as the examples answer them, the first with `visibility` made `value`. */
  const orgsWith = async (value: string): Promise<string> => {
    const orgs = JSON.stringify(await example('/admin/orgs'));
    return orgs.replace(/"visibility":"[a-z]+"/, `"visibility":${value}`);
  };
  const long = `"${'x'.repeat(50)}${TOKEN}${'y'.repeat(200)}"`;
  const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;

  it('the proxy redacts before it cuts, in its lines and its report, and judges the deep value a violation, not the upstream failing', async () => {
    const report = join(FILES, 'proxy.json');
    const upstream = await listen((req, res) => {
      req.resume();
      void (req.url!.includes('page=2') ? orgsWith(deep) : orgsWith(long)).then((body) => {
        res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '10' });
        // And a field the document lacks, named by the token and more.
        res.end(body.replace('"visibility"', `"${'k'.repeat(110)}${TOKEN}":1,"visibility"`));
      });
    });
    const mock = await launch(process.execPath, [
      CLI,
      'proxy',
      upstream.origin,
      '--port',
      '0',
      '--quiet',
      '--report',
      report,
      '--fail-on-violation',
    ]);
    let code: number | null;
    try {
      for (const page of [1, 2]) {
        const answer = await call(new URL(`${mock.baseUrl}/admin/orgs?page=${page}`), 'GET', { headers: AUTH });
        expect(answer.status).toBe(200);
        expect(answer.headers['x-contract-violations']).not.toBe('0');
      }
    } finally {
      code = await mock.stop();
      await close(upstream.server);
    }
    const stdout = mock.output();
    expect(stdout).toMatch(/body \/0\/visibility: "x{50}\[REDACTED… is not an allowed value/);
    expect(stdout).toMatch(/body \/0\/k{110}\[REDACT…: unexpected field/);
    expect(stdout).toMatch(/body nests deeper than 64 levels/);
    expectNoToken(stdout);
    expectNoToken(readFileSync(report, 'utf8'));
    expect(code).toBe(1);
  });

  it('live mode redacts before it cuts, and judges a value a million levels deep a mismatch, its files written', async () => {
    for (const value of [long, deep]) {
      const server = await listen((req, res) => {
        req.resume();
        const path = new URL(req.url!, 'http://x').pathname;
        if (path === '/api/v1/version') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"version":"1.27.1"}');
        } else if (path === '/api/v1/admin/orgs') {
          void orgsWith(value).then((body) => {
            res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '10' });
            res.end(body);
          });
        } else {
          res.writeHead(404, { 'content-type': 'application/json;charset=utf-8' });
          res.end(JSON.stringify({ message: `${'m'.repeat(190)}${TOKEN} not found`, url: '' }));
        }
      });
      const [junit, json] = [join(FILES, 'live.xml'), join(FILES, 'live.json')];
      let out = '';
      try {
        const code = await verify(
          ['--base-url', `${server.origin}/api/v1`, '--junit', junit, '--report', json, '--timeout', '60'],
          { GITEA_TOKEN: TOKEN },
          { stdout: (text) => void (out += text), stderr: (text) => void (out += text) },
        );
        expect(code).toBe(1);
      } finally {
        await close(server.server);
      }
      expect(out).toMatch(
        value === deep ? /body nests deeper than 64 levels/ : /\/visibility: "x{50}\[REDACTED… is not/,
      );
      expect(out).toMatch(/GET \/user\/teams answered 404 "m{190}\[REDACTED\]…"/);
      for (const text of [out, readFileSync(junit, 'utf8'), readFileSync(json, 'utf8')]) expectNoToken(text);
    }
  });
});

describe('8. the sandbox reads a key of repeated armour lines in time linear in its length', () => {
  it('a MiB of begin lines and no end, from 16 credentials at once: 422 to each, as a key without a block', async () => {
    const sandbox = await startMockServer({ port: 0, sandbox: {} });
    try {
      const key = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n'.repeat(28_000);
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          call(new URL(`${sandbox.baseUrl}/user/gpg_keys`), 'POST', {
            headers: { authorization: `token armour-${i}`, 'content-type': 'application/json' },
            body: Buffer.from(JSON.stringify({ armored_public_key: key })),
          }),
        ),
      );
      expect(new Set(answers.map((answer) => `${answer.status} ${JSON.parse(answer.body).message}`))).toEqual(
        new Set(['422 Failed to parse GPG key: no armored PGP public key block']),
      );
    } finally {
      await sandbox.close();
    }
  });
});

describe('13. the proxy forwards origin-form targets only', () => {
  it('refuses an absolute-form target with 400 and sends nothing upstream', async () => {
    const seen: string[] = [];
    const upstream = await listen((req, res) => {
      seen.push(req.url!);
      res.end('{}');
    });
    const { proxy } = await proxyTo(upstream.origin);
    try {
      for (const target of ['http://evil.example/api/v1/version', '*']) {
        const answer = await exchangeRaw(
          proxy.origin,
          `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
        );
        const text = answer.toString('latin1');
        expect(text).toMatch(/^HTTP\/1\.1 400 /);
        expect(text).toContain('the request target must be a path such as /api/v1/version');
      }
      expect(seen).toEqual([]);
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });
});

describe("9. uploads that trickle hold their own connection, not the upstream's", () => {
  it('four uploads outside the contract at a byte a second, against four upstream connections: other requests are answered meanwhile', async () => {
    const upstream = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.end('{"version":"1.27.1"}'));
    });
    const proxy = await startMockServer({ port: 0, proxy: { upstream: upstream.origin, upstreamConnections: 4 } });
    const { hostname, port } = new URL(proxy.origin);
    const tricklers = Array.from({ length: 4 }, () => {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => {});
      socket.write(
        'POST /api/v1/repos/acme/rocket/issues HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      );
      const timer = setInterval(() => socket.write(' '), 1_000);
      return { socket, timer };
    });
    try {
      // Each trickler has sent its head and a first byte; on the old path each took an upstream connection.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (let i = 0; i < 3; i++)
        expect((await call(new URL(`${proxy.baseUrl}/version`), 'GET', { headers: AUTH })).status).toBe(200);
    } finally {
      for (const { socket, timer } of tricklers) {
        clearInterval(timer);
        socket.destroy();
      }
      await proxy.close();
      await close(upstream.server);
    }
  });
});

describe('10. the MSW handlers render markdown under load', () => {
  it('150 short renders at once in the sandbox: every one 200', async () => {
    const server = setupServer(
      ...createGiteaHandlers({ baseUrl: 'https://gitea.test/api/v1', sandbox: true }).handlers,
    );
    server.listen({ onUnhandledRequest: 'error' });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          fetch('https://gitea.test/api/v1/markdown', {
            method: 'POST',
            headers: { authorization: `token render-${i % 30}`, 'content-type': 'application/json' },
            body: JSON.stringify({ Text: `Fixes #${i}, thanks @alice`, Mode: 'comment', Context: '/acme/rocket' }),
          }).then((answer) => answer.status),
        ),
      );
      expect(statuses).toEqual(Array(150).fill(200));
    } finally {
      server.close();
    }
  });
});

describe('11. request bodies held at once share one budget, in the mock and in the proxy', () => {
  const BUDGET = 1024 * 1024;
  /** Five bodies of 240 KiB pass the budget of 1 MiB together, four fit. */
  const SIZE = 240 * 1024;
  const HOOK = '/api/v1/repos/acme/rocket/hooks/4001';
  /** A JSON body of `size` bytes that EditHookOption reads: the rest is whitespace. */
  const padded = (size: number): Buffer => Buffer.from('{"active":true}'.padEnd(size, ' '));

  /**
   * A PATCH of `body` on a connection of its own, sent but for its last `withheld` bytes, which
   * `finish` sends; `answer` is everything that came back once the connection closed.
   */
  function partly(origin: string, body: Buffer, withheld: number): { answer: Promise<string>; finish(): void } {
    const { hostname, port } = new URL(origin);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const answer = new Promise<string>((resolve) =>
      socket.on('close', () => resolve(Buffer.concat(chunks).toString())),
    );
    socket.write(
      `PATCH ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    socket.write(body.subarray(0, body.length - withheld));
    return { answer, finish: () => void socket.write(body.subarray(body.length - withheld)) };
  }
  const statusOf = (answer: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const patch = (base: string, body: Buffer): Promise<Reply> =>
    call(new URL(`${base}${HOOK.slice('/api/v1'.length)}`), 'PATCH', {
      headers: { ...AUTH, 'content-type': 'application/json' },
      body,
    });

  it('the built bin: five bodies withheld their last bytes, past the budget together: one 503, the four others answered once sent, and a later body of nearly the budget fits', async () => {
    const mock = await launch(process.execPath, [CLI, '--port', '0', '--quiet', '--max-body-bytes-in-flight', '1M']);
    const requests = Array.from({ length: 5 }, () => partly(new URL(mock.baseUrl).origin, padded(SIZE), 10 * 1024));
    try {
      const first = await firstSettled(
        requests.map(({ answer }) => answer),
        'a refusal of the body past the budget',
      );
      const refused = first.value;
      expect(statusOf(refused)).toBe(503);
      expect(refused).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(refused).toContain(
        `"message":"request bodies being read or held take the ${BUDGET} bytes this server holds at once; try again shortly"`,
      );
      expectNoToken(refused);
      const others = requests.filter((_, index) => index !== first.index);
      for (const { finish } of others) finish();
      const answered = await firstSettled([Promise.all(others.map(({ answer }) => answer))], 'the four answers');
      expect(answered.value.map(statusOf)).toEqual([200, 200, 200, 200]);
      // Each request gave its bytes back when it ended.
      expect((await patch(mock.baseUrl, padded(1_000_000))).status).toBe(200);
      // A body that can never fit is refused before it is read.
      const never = await patch(mock.baseUrl, padded(BUDGET + 1));
      expect([never.status, JSON.parse(never.body).message]).toEqual([
        413,
        `request body exceeds the ${BUDGET} bytes of request bodies this server holds at once`,
      ]);
      expect(mock.child.exitCode).toBeNull();
    } finally {
      for (const { finish } of requests) finish();
      await mock.stop();
    }
  });

  it('the built bin as a proxy in front of an upstream that holds its answers: the body past the budget 503, the others answered once the upstream answers, and a later body fits', async () => {
    const waiting: ServerResponse[] = [];
    let holding = true;
    let arrived: () => void = () => {};
    const fourArrived = new Promise<void>((resolve) => (arrived = resolve));
    const upstream = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        const answer = (): void => {
          res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
          res.end('{}');
        };
        if (!holding) return answer();
        waiting.push(res);
        if (waiting.length === 4) arrived();
      });
    });
    const proxy = await launch(process.execPath, [
      CLI,
      ...['proxy', upstream.origin, '--port', '0', '--quiet', '--max-body-bytes-in-flight', '1M'],
    ]);
    try {
      const answers = Array.from({ length: 5 }, () => patch(proxy.baseUrl, padded(SIZE)));
      const first = await firstSettled(answers, 'a refusal of the body past the budget');
      expect([first.value.status, first.value.headers['retry-after'], JSON.parse(first.value.body).message]).toEqual([
        503,
        '1',
        `request bodies being read or held take the ${BUDGET} bytes this server holds at once; try again shortly`,
      ]);
      expectNoToken(first.value.body);
      await firstSettled([fourArrived], 'the four other requests at the upstream');
      holding = false;
      for (const res of waiting) {
        res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
        res.end('{}');
      }
      const others = answers.filter((_, index) => index !== first.index);
      const answered = await firstSettled([Promise.all(others)], 'the four answers');
      expect(answered.value.map(({ status }) => status)).toEqual([200, 200, 200, 200]);
      expect((await patch(proxy.baseUrl, padded(1_000_000))).status).toBe(200);
      expect(proxy.child.exitCode).toBeNull();
    } finally {
      await proxy.stop();
      await close(upstream.server);
    }
  });
});
