// Hostile input the mock's front must answer in the service's dialect without going down, as
// test cases for any running mock: mock-hostile.test.ts runs them against the built gitea-mock
// users start (the sources in-process would repeat them: the build is made from them). Raw sockets where fetch or
// node:http would refuse to send the request or hide the answer; everything on 127.0.0.1.
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { call } from './call.js';
import { exchangeRaw, parseRaw, sendRaw } from './http.js';

type Answer = { status: number; headers: Record<string, unknown>; body: unknown };

/** A raw request: its lines, the blank line, the body (a string as Latin-1). */
export const rawRequest = (lines: string[], body: string | Buffer = ''): Buffer =>
  Buffer.concat([
    Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'),
    Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'),
  ]);

/** The service's error body, `{message, url}` (not-found adds `errors`), with the server's own documentation address. */
export function expectDialect(answer: Answer, origin: string, status: number, message?: string | RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
  const body = (typeof answer.body === 'string' ? JSON.parse(answer.body) : answer.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(status === 404 ? ['errors', 'message', 'url'] : ['message', 'url']);
  expect(body.url).toBe(`${origin}/api/swagger`);
  if (typeof message === 'string') expect(body.message).toBe(message);
  else if (message) expect(body.message).toMatch(message);
}

const ASSETS = '/api/v1/repos/acme/rocket/releases/14001/assets';

/** A multipart upload of `parts` (each a part's header lines and data) under the boundary `XyZ`, with `nl` as line end. */
function multipart(parts: { headers: string[]; data: string }[], { nl = '\r\n', close = true } = {}): string {
  const framed = parts
    .map((part) => `--XyZ${nl}${part.headers.map((line) => `${line}${nl}`).join('')}${nl}${part.data}${nl}`)
    .join('');
  return `${framed}${close ? `--XyZ--${nl}` : ''}`;
}
const file = (name: string, filename: string, data: string, type?: string) => ({
  headers: [
    `Content-Disposition: form-data; name="${name}"; filename="${filename}"`,
    ...(type ? [`Content-Type: ${type}`] : []),
  ],
  data,
});

/** Defines the cases (call inside a describe); `originOf` gives the mock's `http://host:port` once it runs. */
export function hostileInputCases(originOf: () => string): void {
  const raw = async (bytes: string | Buffer): Promise<Answer> => parseRaw(await sendRaw(originOf(), bytes));
  const upload = (body: string, contentType = 'multipart/form-data; boundary=XyZ') =>
    raw(
      rawRequest(
        [
          `POST ${ASSETS} HTTP/1.1`,
          'Host: 127.0.0.1',
          'Authorization: token abc',
          `Content-Type: ${contentType}`,
          `Content-Length: ${Buffer.byteLength(body, 'latin1')}`,
          'Connection: close',
        ],
        body,
      ),
    );

  // A peer that never closes its side would otherwise keep the server's socket: after its answer
  // the server closes, so a write a second and a half later is reset and the next one fails.
  // Concurrent, as they mostly wait (so does mock-hostile.test.ts's idle-connection test, defined just before).
  it.concurrent.for([
    ['CONNECT', rawRequest(['CONNECT example.org:443 HTTP/1.1', 'Host: example.org:443'])],
    ['a malformed request', rawRequest(['GET /api/v1/version HTTP/1.1', 'Host: 127.0.0.1', 'Bad header'])],
  ] as const)(
    'after refusing %s the server lets go of the connection, even if the peer never closes',
    async ([, bytes], { expect }) => {
      const { hostname, port } = new URL(originOf());
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () => socket.write(bytes));
        const timer = setTimeout(() => {
          socket.destroy();
          resolve('still open');
        }, 5_000);
        socket.on('error', (error: NodeJS.ErrnoException) => {
          clearTimeout(timer);
          socket.destroy();
          resolve(error.code ?? 'error');
        });
        socket.on('end', () =>
          setTimeout(() => socket.write('more', () => setTimeout(() => socket.write('again'), 200)), 1_500),
        );
        socket.on('data', () => {});
      });
      expect(['ECONNRESET', 'EPIPE']).toContain(outcome);
    },
  );

  it('a declared body over 10 MB: 413 before reading it', async () => {
    const answer = await raw(
      rawRequest(
        [
          'PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1',
          'Host: 127.0.0.1',
          'Authorization: token abc',
          'Content-Type: application/json',
          `Content-Length: ${11 * 1024 * 1024}`,
        ],
        '{"active":',
      ),
    );
    expectDialect(answer, originOf(), 413, /exceeds/);
  });

  it('a streamed body over 10 MB: 413', async () => {
    // Chunked, so that no length announces it: the mock counts while it reads. A raw socket, as the
    // mock closes while the client still writes, which node:http reports as a failure.
    const mib = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(1024 * 1024, 0x20), Buffer.from('\r\n')]);
    const body = Buffer.concat([...Array<Buffer>(11).fill(mib), Buffer.from('0\r\n\r\n')]);
    const head = [
      'PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1',
      'Host: 127.0.0.1',
      'Authorization: token abc',
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
    ];
    const answer = parseRaw((await exchangeRaw(originOf(), rawRequest(head, body), { end: true })).toString('utf8'));
    expectDialect(answer, originOf(), 413, /exceeds/);
  });

  it('malformed and truncated JSON: 422 as Gitea binding answers', async () => {
    for (const body of ['{"active": tru', '{"active": true', 'not json at all']) {
      const answer = await call(new URL(`${originOf()}/api/v1/repos/acme/rocket/hooks/4001`), 'PATCH', {
        headers: { authorization: 'token abc', 'content-type': 'application/json' },
        body: Buffer.from(body),
      });
      expectDialect(answer, originOf(), 422, /^\[\]: /);
    }
  });

  it('invalid UTF-8 in a JSON body: 422', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
    const answer = await call(new URL(`${originOf()}/api/v1/repos/acme/rocket/hooks/4001`), 'PATCH', {
      headers: { authorization: 'token abc', 'content-type': 'application/json' },
      body: bytes,
    });
    expectDialect(answer, originOf(), 422, /not valid UTF-8/);
  });

  it("a body nested a million levels deep: 422 as Go's decoder words it, and the next request is answered", async () => {
    const deep = `{"events":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
    const answer = await call(new URL(`${originOf()}/api/v1/repos/acme/rocket/hooks/4001`), 'PATCH', {
      headers: { authorization: 'token abc', 'content-type': 'application/json' },
      body: Buffer.from(deep),
    });
    expectDialect(answer, originOf(), 422, '[]: exceeded max depth');
    expect((await call(new URL(`${originOf()}/api/v1/version`), 'GET')).status).toBe(200);
  });

  it('CR or LF inside a header: 400 in the service dialect', async () => {
    const answer = await raw(
      rawRequest(['GET /api/v1/admin/orgs HTTP/1.1', 'Host: 127.0.0.1', 'Authorization: token abc\rX-Injected: yes']),
    );
    expectDialect(answer, originOf(), 400, 'malformed HTTP request');
  });

  it('headers over 16 KiB: 431', async () => {
    const answer = await raw(
      rawRequest(['GET /api/v1/admin/orgs HTTP/1.1', 'Host: 127.0.0.1', `X-Padding: ${'a'.repeat(20_000)}`]),
    );
    expectDialect(answer, originOf(), 431, 'request headers are too large');
  });

  it.each([
    '/api/v1/../../../etc/passwd',
    '/api/v1/repos/acme/rocket/keys/..%2F..%2F..%2Fetc%2Fpasswd',
    '/api/v1/repos/%E0%A4%A/rocket/keys/1',
    '/%2e%2e/%2e%2e/etc/passwd',
  ])('path traversal and broken escapes (%s): a 4xx, never a file', async (path) => {
    const answer = await raw(
      rawRequest([`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Authorization: token abc', 'Connection: close']),
    );
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.body).toMatchObject({ message: expect.any(String) });
  });

  // Each reaches an operation, whose path parameters Prism decodes: a 500 if the front lets it by.
  it.each([
    ['GET', '/api/v1/repos/acme/rock%zzet/keys/11001'],
    ['PUT', '/api/v1/user/actions/secrets/A%ff'],
    ['GET', '/api/v1/repos/%E0%A4%A/rocket/keys/1'],
    ['PATCH', '/api/v1/repos/acme/rocket/hooks/4001%'],
  ])('a broken percent-escape in an operation path (%s %s): 400 in the dialect', async (method, path) => {
    const body = method === 'GET' ? '' : '{"data":"s3cr3t"}';
    const answer = await raw(
      rawRequest(
        [
          `${method} ${path} HTTP/1.1`,
          'Host: 127.0.0.1',
          'Authorization: token abc',
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
          'Connection: close',
        ],
        body,
      ),
    );
    expectDialect(answer, originOf(), 400, 'the request path is not a valid URL path');
  });

  // Go's multipart reader, which Gitea's FormFile("attachment") uses, takes these: a file part is
  // one with a file name, with or without a Content-Type, and the first of two is the file.
  it.each([
    ['a file part without Content-Type', multipart([file('attachment', 'a.txt', 'hello')])],
    [
      'two attachment parts without Content-Type',
      multipart([file('attachment', 'a.txt', 'hello'), file('attachment', 'b.txt', 'world')]),
    ],
    [
      'a part named by RFC 2231 and a name field, after a preamble, with LF line ends',
      `preamble\n${multipart(
        [
          { headers: [`Content-Disposition: form-data; name=attachment; filename*=UTF-8''r%C3%A4k.txt`], data: 'x' },
          { headers: ['Content-Disposition: form-data; name="name"'], data: 'a;b="c"' },
        ],
        { nl: '\n' },
      )}`,
    ],
    // Prism's parser, which forgets its line every 8 characters here, takes the boundary for the
    // part's end and the next line for a part's header.
    [
      'data holding the boundary inside a line',
      multipart([file('attachment', 'a.txt', `${'x'.repeat(24)}--XyZ\r\nnot a header\r\n\r\nmore`, 'text/plain')]),
    ],
  ])('multipart with %s: answered as Gitea accepts it (201)', async (_what, body) => {
    const answer = await upload(body);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ browser_download_url: expect.any(String) });
  });

  it.each([
    [
      'cut before its closing boundary',
      multipart([file('attachment', 'a.txt', 'hello')], { close: false }),
      'the body ends before its closing boundary',
    ],
    ['with no boundary in it', 'hello', 'no part and no closing boundary'],
    [
      'with a part header that is no header',
      multipart([
        { headers: ['Content-Disposition: form-data; name="attachment"; filename="a"', 'no colon here'], data: 'x' },
      ]),
      'malformed part header "no colon here"',
    ],
    [
      'with a broken delimiter after a part',
      `${multipart([file('attachment', 'a.txt', 'hello')], { close: false }).slice(0, -2)}\r\n--XyZ\rjunk\r\n--XyZ--\r\n`,
      'expected a boundary after a part, got "--XyZ\\rjunk\\r\\n"',
    ],
    [
      'of 1,001 parts',
      multipart(
        Array.from({ length: 1001 }, (_, i) => ({
          headers: [`Content-Disposition: form-data; name="f${i}"`],
          data: '',
        })),
      ),
      'more than 1000 parts',
    ],
  ])('multipart %s: 400 in the dialect', async (_what, body, reason) => {
    expectDialect(await upload(body), originOf(), 400, `failed to parse request multipart form: ${reason}`);
  });

  it('a Content-Type that is no media type: 422 with a body, as Gitea binding answers, and ignored without one', async () => {
    for (const type of ['garbage', 'application/json, text/plain', '/']) {
      expectDialect(
        await upload('{}', type),
        originOf(),
        422,
        `[]: Unsupported Content-Type (not a media type: ${JSON.stringify(type)})`,
      );
      const read = await raw(
        rawRequest([
          'GET /api/v1/repos/acme/rocket/keys/11001 HTTP/1.1',
          'Host: 127.0.0.1',
          'Authorization: token abc',
          `Content-Type: ${type}`,
          'Connection: close',
        ]),
      );
      expect(read.status).toBe(200);
    }
  });

  it('an Expect other than 100-continue: 417 in the dialect, and the connection closed', async () => {
    const answer = await raw(rawRequest(['GET /api/v1/version HTTP/1.1', 'Host: 127.0.0.1', 'Expect: 200-ok']));
    expectDialect(answer, originOf(), 417, 'Expect: 200-ok cannot be met; only 100-continue is supported');
    expect(answer.headers.connection).toBe('close');
  });

  it('HTTP/1.1 without Host: 400 in the dialect; HTTP/1.0 needs none', async () => {
    const answer = await raw(rawRequest(['GET /api/v1/version HTTP/1.1']));
    expectDialect(answer, originOf(), 400, 'missing required Host header');
    expect(answer.headers.connection).toBe('close');
    expect((await raw(rawRequest(['GET /api/v1/version HTTP/1.0']))).status).toBe(200);
  });

  it('two Host headers: 400 in the dialect, as Go refuses them', async () => {
    const answer = await raw(
      rawRequest(['GET /api/v1/version HTTP/1.1', 'Host: 127.0.0.1', 'Host: gitea.example.net']),
    );
    expectDialect(answer, originOf(), 400, 'too many Host headers');
    expect(answer.headers.connection).toBe('close');
  });

  it('CONNECT: 405 in the dialect, and the connection closed', async () => {
    const answer = await raw(rawRequest(['CONNECT example.org:443 HTTP/1.1', 'Host: example.org:443']));
    expectDialect(answer, originOf(), 405, 'CONNECT is not allowed: this server opens no tunnels');
  });

  it('two thousand concurrent connections, half of them hostile: every one answered, the server stays up', async () => {
    const hostile = rawRequest(
      [
        'PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: token abc',
        'Content-Type: application/json',
        'Content-Length: 9',
        'Connection: close',
      ],
      '{"active"',
    );
    const valid = rawRequest([
      'GET /api/v1/repos/acme/rocket/keys/11001 HTTP/1.1',
      'Host: 127.0.0.1',
      'Authorization: token abc',
      'Connection: close',
    ]);
    const answers = await Promise.all(Array.from({ length: 2000 }, (_, i) => raw(i % 2 === 0 ? hostile : valid)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(1000);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
    expect(
      (await call(new URL(`${originOf()}/api/v1/admin/orgs`), 'GET', { headers: { authorization: 'token abc' } }))
        .status,
    ).toBe(200);
  });
}
