// Hostile input against the mock as users run it: the built bin (mock/dist/cli.mjs, what
// `npm start` and `npx gitea-mock` start), not the sources, so that a change the bundler makes
// cannot hide (it once dropped the path check as a pure call). The shared cases (support/hostile.ts)
// and what only a process of its own can show: idle connections under a low limit on open files,
// the form the sandbox reads, and the proxy's check of what it passes on.
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeRaw, parseRaw, sendRaw } from './support/http.js';
import { expectDialect, hostileInputCases, rawRequest } from './support/hostile.js';
import { launch, type Launched } from './support/launch.js';
import { rawUpstream, type RawUpstream } from './support/upstream.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const VERSION = rawRequest(['GET /api/v1/version HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close']);

describe('the built gitea-mock', () => {
  let mock: Launched;
  let origin = '';
  beforeAll(async () => {
    mock = await launch(process.execPath, [CLI, '--port', '0', '--quiet']);
    origin = new URL(mock.baseUrl).origin;
  });
  afterAll(async () => {
    await mock?.stop();
  });

  // Concurrent with the first shared cases, which mostly wait too.
  it.concurrent('closes a connection that sends nothing, and an idle kept-alive one, within the 5 s idle bound', async ({
    expect,
  }) => {
    const started = performance.now();
    const silent = exchangeRaw(origin, '', { timeoutMs: 10_000 }).then((bytes) => ({
      bytes,
      after: performance.now() - started,
    }));
    const keptAlive = exchangeRaw(origin, rawRequest(['GET /api/v1/version HTTP/1.1', 'Host: 127.0.0.1']), {
      timeoutMs: 10_000,
    }).then((bytes) => ({ bytes, after: performance.now() - started }));
    const [quiet, idle] = await Promise.all([silent, keptAlive]);
    // Node checks the bound every second; before, a silent one stayed 10 to 40 s. How soon after
    // the bound: bench/time-bounds.mjs.
    for (const { after } of [quiet, idle]) expect(after).toBeGreaterThan(4_500);
    expectDialect(parseRaw(quiet.bytes.toString('utf8')), origin, 408, 'the request took too long');
    expect(idle.bytes.toString('latin1')).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[\s\S]*Keep-Alive: timeout=5\r\n[\s\S]*\{"version":/,
    );
  }, 15_000);

  hostileInputCases(() => origin);
});

/** Opens `count` connections to `origin` at once, each sending `bytes` (nothing if empty), and resolves once every one is connected. */
async function openMany(
  origin: string,
  count: number,
  bytes: Buffer | string = '',
): Promise<{ sockets: Socket[]; closed: () => number; received: (socket: Socket) => string }> {
  const { hostname, port } = new URL(origin);
  let closed = 0;
  const received = new Map<Socket, string>();
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => {
            if (bytes.length > 0) socket.write(bytes);
            resolve(socket);
          });
          socket.on('data', (chunk: Buffer) =>
            received.set(socket, (received.get(socket) ?? '') + chunk.toString('latin1')),
          );
          socket.on('error', (error) => reject(error));
          socket.on('close', () => closed++);
        }),
    ),
  );
  return { sockets, closed: () => closed, received: (socket) => received.get(socket) ?? '' };
}

// Past its limit on open files Node accepts a new connection and drops it at once: without a
// ceiling, 1,100 idle sockets would keep every new client out until Node's header timeout closed
// them. With 1,024 files the mock keeps 896 connections open at most (front/node-server.ts).
describe('the built gitea-mock with a limit of 1,024 open files', () => {
  let mock: Launched;
  let origin = '';
  beforeAll(async () => {
    mock = await launch('sh', [
      '-c',
      'ulimit -n 1024 && exec "$0" "$@"',
      process.execPath,
      CLI,
      '--port',
      '0',
      '--quiet',
    ]);
    origin = new URL(mock.baseUrl).origin;
  });
  afterAll(async () => {
    await mock?.stop();
  });

  it('1,100 idle connections do not lock a new client out: the longest idle ones are closed', async () => {
    const flood = await openMany(origin, 1_100);
    try {
      // Answered within 3 s, before the header timeout (5 s) would have freed a connection.
      const answer = parseRaw(await sendRaw(origin, VERSION, 3_000));
      expect(answer.status).toBe(200);
      // 896 at most stay open; the first ones went first.
      await expect.poll(() => flood.closed(), { timeout: 2_000 }).toBeGreaterThanOrEqual(1_100 - 896);
      expect(flood.sockets[0]!.destroyed).toBe(true);
      expect(flood.sockets.at(-1)!.destroyed).toBe(false);
    } finally {
      for (const socket of flood.sockets) socket.destroy();
    }
  });

  it('when every connection is busy with a request, a new one is answered 503 in the dialect', async () => {
    // Each waits for a body it never gets; Node's `100 Continue` says its request is in progress.
    const upload = rawRequest([
      'PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1',
      'Host: 127.0.0.1',
      'Authorization: token abc',
      'Content-Type: application/json',
      'Content-Length: 20',
      'Expect: 100-continue',
    ]);
    const busy = await openMany(origin, 1_000, upload);
    try {
      await expect
        .poll(
          () =>
            busy.sockets.every(
              (socket) => socket.destroyed || busy.received(socket).startsWith('HTTP/1.1 100 Continue'),
            ),
          { timeout: 5_000 },
        )
        .toBe(true);
      expect(busy.sockets.filter((socket) => !socket.destroyed)).toHaveLength(896);
      const answer = parseRaw(await sendRaw(origin, VERSION, 3_000));
      expectDialect(answer, origin, 503, 'too many connections are busy; try again shortly');
    } finally {
      for (const socket of busy.sockets) socket.destroy();
    }
    // Once they go, new clients are served again.
    await expect.poll(async () => parseRaw(await sendRaw(origin, VERSION, 3_000)).status, { timeout: 3_000 }).toBe(200);
  });
});

// The answer sources get the form as Go's reader reads it, re-framed: the sandbox stores what
// Gitea would store.
describe('the built gitea-mock sandbox', () => {
  let mock: Launched;
  beforeAll(async () => {
    mock = await launch(process.execPath, [CLI, 'sandbox', '--port', '0', '--quiet']);
  });
  afterAll(async () => {
    await mock?.stop();
  });

  /** A release attachment sent as `body`, a multipart form under the boundary `XyZ`, byte for byte. */
  const upload = async (body: string) =>
    parseRaw(
      await sendRaw(
        new URL(mock.baseUrl).origin,
        rawRequest(
          [
            'POST /api/v1/repos/acme/rocket/releases/14001/assets HTTP/1.1',
            'Host: 127.0.0.1',
            'Authorization: token hostile-form',
            'Content-Type: multipart/form-data; boundary=XyZ',
            `Content-Length: ${Buffer.byteLength(body)}`,
            'Connection: close',
          ],
          Buffer.from(body),
        ),
      ),
    );

  it('stores a multipart upload that Prism could not read as Gitea would: its file name and its exact bytes', async () => {
    const data = `${'x'.repeat(20)}--XyZ\nnot a header\n\nmore--XyZ--`;
    const body = `preamble\n--XyZ\nContent-Disposition: form-data; name=attachment; filename*=UTF-8''dir%2Fr%C3%A4k%22s.txt\n\n${data}\n--XyZ--\n`;
    const answer = await upload(body);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ name: 'räk"s.txt', size: Buffer.byteLength(data) });
  });

  it("keeps the bytes of an RFC 2231 file name that is no UTF-8, as Go does, answered as Go's JSON writes them", async () => {
    const body = `--XyZ\r\nContent-Disposition: form-data; name=attachment; filename*=UTF-8''%ff%fe%e2%9c.txt\r\n\r\nx\r\n--XyZ--\r\n`;
    const answer = await upload(body);
    expect([answer.status, (answer.body as { name: string }).name]).toEqual([201, '\ufffd\ufffd\ufffd\ufffd.txt']);
  });
});

// The proxy passes hostile requests on as they came and reports them; its check of the request
// must not fail on them (it answered 502 for a broken escape, blaming the upstream).
const CUT = '--XyZ\r\nContent-Disposition: form-data; name="attachment"; filename="a"\r\n\r\nx';

describe('the built gitea-mock proxy', () => {
  let upstream: RawUpstream;
  let proxy: Launched;
  beforeAll(async () => {
    upstream = await rawUpstream((socket) =>
      socket.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request',
      ),
    );
    proxy = await launch(process.execPath, [CLI, 'proxy', upstream.origin, '--port', '0', '--quiet']);
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
  });

  it.each([
    [
      'a broken percent-escape',
      rawRequest([
        'GET /api/v1/repos/acme/rock%zzet/keys/11001 HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: token abc',
        'Connection: close',
      ]),
      'repoGetKey GET /api/v1/repos/acme/rock%zzet/keys/11001: 2 violations: request path: the request path is not a valid URL path',
    ],
    [
      'a multipart body cut short',
      rawRequest(
        [
          'POST /api/v1/repos/acme/rocket/releases/14001/assets HTTP/1.1',
          'Host: 127.0.0.1',
          'Authorization: token abc',
          'Content-Type: multipart/form-data; boundary=XyZ',
          `Content-Length: ${CUT.length}`,
          'Connection: close',
        ],
        CUT,
      ),
      'repoCreateReleaseAttachment POST /api/v1/repos/acme/rocket/releases/14001/assets: 2 violations: request body: failed to parse request multipart form: the body ends before its closing boundary',
    ],
    [
      'a Content-Type that is no media type',
      rawRequest(
        [
          'PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1',
          'Host: 127.0.0.1',
          'Authorization: token abc',
          'Content-Type: garbage',
          'Content-Length: 2',
          'Connection: close',
        ],
        '{}',
      ),
      'repoEditHook PATCH /api/v1/repos/acme/rocket/hooks/4001: 2 violations: request headers.content-type: not a media type: "garbage"',
    ],
  ])("%s: passed on, the upstream's answer passed back, and reported", async (_what, bytes, line) => {
    const before = upstream.received.length;
    // The client's side stays open: the proxy takes a client that closes it for one that left.
    const answer = (await exchangeRaw(new URL(proxy.baseUrl).origin, bytes)).toString('latin1');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\nBad Request$/);
    expect(upstream.received[before]?.toString('latin1')).toContain(bytes.toString('latin1').split('\r\n')[0]);
    await expect.poll(() => proxy.output()).toContain(`gitea-mock: contract: ${line}`);
  });
});
