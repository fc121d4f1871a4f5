// `gitea-mock proxy`: against local fake upstreams on loopback. One conforms (the examples mock
// itself): nothing is reported and answers are the upstream's byte for byte. One breaks the
// document on purpose: each break is reported with its location and the answer still passes
// through. Others reset, stall, refuse, or speak no TLS: 502 or 504 in the service's dialect, and
// the proxy keeps running. Credentials never reach a log line, the report or a header.
import { createHash } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUpstream } from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { startTlsServer } from '../test/support/tls-server.js';
import { call, type Reply } from './support/call.js';
import { launch } from './support/launch.js';
import { close, listen } from './support/upstream.js';

const TOKEN = 'tok_proxy_SECRET_4f1e9a';
const AUTH = { authorization: `token ${TOKEN}` };

/** A proxy in-process to `upstream`, with the violation lines it printed. */
async function proxyTo(
  upstream: string,
  extra: { strict?: boolean; report?: string; timeoutMs?: number } = {},
): Promise<{ proxy: MockServer; lines: string[] }> {
  const lines: string[] = [];
  const { report, ...options } = extra;
  const proxy = await startMockServer({
    port: 0,
    proxy: { upstream, onViolations: (line) => lines.push(line), ...options },
  });
  // The report is handed back as data; the command writes it, as this does.
  const close = proxy.close;
  proxy.close = async () => {
    await close();
    if (report !== undefined) await writeFile(report, `${JSON.stringify(proxy.proxyReport?.(), null, 2)}\n`);
  };
  return { proxy, lines };
}

/** What must match between a direct answer and the proxied one: all but connection-level and per-answer headers. */
function comparable(answer: Reply): { status: number; body: string; headers: Record<string, unknown> } {
  const headers = Object.fromEntries(
    Object.entries(answer.headers).filter(
      ([name]) =>
        !['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-contract-violations'].includes(name) &&
        !name.startsWith('access-control-'),
    ),
  );
  return { status: answer.status, body: answer.body, headers };
}

describe('a conforming upstream (the examples mock)', () => {
  let upstream: MockServer;
  let proxy: MockServer;
  let lines: string[];
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'gitea-contract-proxy-'));
    upstream = await startMockServer({ port: 0 });
    ({ proxy, lines } = await proxyTo(upstream.origin, { report: join(folder, 'report.json') }));
  });
  afterAll(async () => {
    await upstream.close();
    await rm(folder, { recursive: true, force: true });
  });

  const multipart = (): { body: Buffer; type: string } => {
    const boundary = 'proxy-boundary-1234';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
    );
    return { body, type: `multipart/form-data; boundary=${boundary}` };
  };
  const requests: [string, string, Record<string, string>, Buffer | undefined][] = [
    ['GET', '/repos/acme/rocket/keys/11001', {}, undefined],
    ['GET', '/admin/orgs?limit=2&page=2', {}, undefined],
    [
      'PATCH',
      '/repos/acme/rocket/hooks/4001',
      { 'content-type': 'application/json' },
      Buffer.from('{"active":true,"events":["push"]}'),
    ],
    [
      'POST',
      '/markdown',
      { 'content-type': 'application/json' },
      Buffer.from('{"Text":"Fixed in #42","Mode":"comment"}'),
    ],
    ['PATCH', '/notifications/threads/10001?to-status=pinned', {}, undefined],
    ['GET', '/repos/acme/rocket/issues/comments/15099/assets', { prefer: 'code=404' }, undefined],
    [
      'POST',
      '/repos/acme/rocket/releases/14001/assets?name=a.txt',
      { 'content-type': multipart().type },
      multipart().body,
    ],
    [
      'PUT',
      '/user/actions/secrets/DEPLOY_TOKEN',
      { 'content-type': 'application/json' },
      Buffer.from('{"data":"s3cr3t-value"}'),
    ],
  ];

  it.each(requests)(
    '%s %s: the upstream answer, byte for byte, with nothing reported',
    async (method, path, headers, body) => {
      const direct = await call(new URL(`${upstream.baseUrl}${path}`), method, {
        headers: { ...AUTH, ...headers },
        body,
      });
      const proxied = await call(new URL(`${proxy.baseUrl}${path}`), method, {
        headers: { ...AUTH, ...headers },
        body,
      });
      expect(comparable(proxied)).toEqual(comparable(direct));
      expect(proxied.headers['x-contract-violations']).toBe('0');
      expect(lines).toEqual([]);
    },
  );

  it('lets requests outside the 20 operations through untouched, uncounted as violations', async () => {
    const direct = await call(new URL(`${upstream.origin}/favicon.ico`), 'GET');
    const proxied = await call(new URL(`${proxy.origin}/favicon.ico`), 'GET');
    expect(comparable(proxied)).toEqual(comparable(direct));
    expect(proxied.headers['x-contract-violations']).toBeUndefined();
  });

  it('reports a request that breaks the document, and still forwards it by default', async () => {
    const answer = await call(new URL(`${proxy.baseUrl}/repos/acme/rocket/collaborators/bob?token=${TOKEN}`), 'PUT', {
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"permission":"owner"}'),
    });
    // The upstream's own refusal came back: it wants credentials first.
    expect(answer.status).toBe(401);
    expect(answer.headers['x-contract-violations']).toBe('2');
    expect(lines.at(-1)).toBe(
      'repoAddCollaborator PUT /api/v1/repos/acme/rocket/collaborators/bob: 2 violations: request headers.authorization: token is required; request body.permission: Request body property permission must be equal to one of the allowed values: read, write, admin, null',
    );
    lines.length = 0;
  });

  it('writes a report per operation on close, with no credential in it', async () => {
    await proxy.close();
    const report = JSON.parse(await readFile(join(folder, 'report.json'), 'utf8')) as Record<string, unknown>;
    expect(report).toMatchObject({
      upstream: upstream.origin,
      notInContract: { exchanges: 1 },
      operations: {
        repoGetKey: { exchanges: 1, withViolations: 0, violations: {} },
        repoAddCollaborator: {
          exchanges: 1,
          withViolations: 1,
          violations: { 'request.headers': 1, 'request.body': 1 },
        },
      },
    });
    expect(JSON.stringify(report)).not.toContain(TOKEN);
  });
});

describe('an upstream that breaks the document', () => {
  const ORG = { id: 2001, name: 'acme', full_name: 'Acme Rockets', username: 'acme', visibility: 'public' };
  /** Answers of keys/11002, in turn: conforming, then with a string id. */
  let turn = 0;
  const planted: Record<string, (res: ServerResponse) => void> = {
    '/api/v1/repos/acme/rocket/keys/11002': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json;charset=utf-8' })
        .end(turn++ % 2 === 0 ? '{"id":11002,"title":"ci-runner"}' : '{"id":"11002","title":"ci-runner"}'),
    '/api/v1/admin/orgs': (res) =>
      res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end(JSON.stringify([ORG])), // no X-Total-Count
    '/api/v1/repos/acme/rocket/keys/11001': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-echo': 'kept' })
        .end('{"id":"11001","title":"ci-runner"}'), // id is a string
    '/api/v1/teams/12001/members': (res) =>
      res.writeHead(418, { 'content-type': 'application/json;charset=utf-8' }).end('{"message":"teapot","url":"x"}'), // undeclared status
    '/api/v1/repos/acme/rocket/actions/workflows/build.yml': (res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('name: build'), // undeclared media type
    '/api/v1/version': (res) =>
      res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end('{"version":"1.26.2"}\n'),
  };
  let upstream: { server: Server; origin: string };
  let proxy: MockServer;
  let lines: string[];
  beforeAll(async () => {
    upstream = await listen((req, res) => {
      req.resume();
      (planted[new URL(req.url ?? '/', 'http://x').pathname] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res);
    });
    ({ proxy, lines } = await proxyTo(upstream.origin));
  });
  afterAll(async () => {
    await proxy.close();
    await close(upstream.server);
  });

  it.each([
    [
      '/admin/orgs',
      'adminGetAllOrgs GET /api/v1/admin/orgs: 1 violation: response header X-Total-Count is required but missing',
    ],
    [
      '/repos/acme/rocket/keys/11001',
      'repoGetKey GET /api/v1/repos/acme/rocket/keys/11001: 1 violation: response body /id must be integer',
    ],
    [
      '/teams/12001/members',
      'orgListTeamMembers GET /api/v1/teams/12001/members: 1 violation: response status 418 is not declared (declared: 200, 401, 403, 404, 500, 503)',
    ],
    [
      '/repos/acme/rocket/actions/workflows/build.yml',
      'ActionsGetWorkflow GET /api/v1/repos/acme/rocket/actions/workflows/build.yml: 1 violation: response content type text/plain is not declared (declared: application/json)',
    ],
  ])('GET %s: reported with its location, and the answer passed through unchanged', async (path, line) => {
    const direct = await call(new URL(`${upstream.origin}/api/v1${path}`), 'GET', { headers: AUTH });
    const proxied = await call(new URL(`${proxy.baseUrl}${path}`), 'GET', { headers: AUTH });
    expect(comparable(proxied)).toEqual(comparable(direct));
    expect(proxied.headers['x-contract-violations']).toBe('1');
    expect(lines.at(-1)).toBe(line);
  });

  it('judges each repeat of a request by its own answer: a conforming one passes, a breaking one is reported every time', async () => {
    const counts: (string | undefined)[] = [];
    for (let n = 0; n < 4; n++) {
      const proxied = await call(new URL(`${proxy.baseUrl}/repos/acme/rocket/keys/11002`), 'GET', { headers: AUTH });
      expect(proxied.status).toBe(200);
      counts.push(proxied.headers['x-contract-violations'] as string | undefined);
    }
    expect(counts).toEqual(['0', '1', '0', '1']);
    expect(lines.at(-1)).toBe(
      'repoGetKey GET /api/v1/repos/acme/rocket/keys/11002: 1 violation: response body /id must be integer',
    );
  });

  it("GET /version is the upstream's, passed through unchecked: the mock does not answer it in proxy mode", async () => {
    const proxied = await call(new URL(`${proxy.baseUrl}/version`), 'GET');
    expect([proxied.status, proxied.body]).toEqual([200, '{"version":"1.26.2"}\n']);
    expect(proxied.headers['x-contract-violations']).toBeUndefined();
  });

  it('--strict answers a request that breaks the document with the mock 422, without forwarding it', async () => {
    const received: string[] = [];
    const counting = await listen((req, res) => {
      received.push(req.url ?? '');
      req.resume();
      res.writeHead(204).end();
    });
    const { proxy: strict, lines: strictLines } = await proxyTo(counting.origin, { strict: true });
    try {
      const refused = await call(new URL(`${strict.baseUrl}/repos/acme/rocket/collaborators/bob`), 'PUT', {
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: Buffer.from('{"permission":"owner"}'),
      });
      expect(refused.status).toBe(422);
      expect(JSON.parse(refused.body)).toEqual({
        message: expect.stringMatching(/^the request breaks the document: request body\.permission: /),
        url: `${strict.origin}/api/swagger`,
      });
      expect(received).toEqual([]);
      expect(strictLines).toHaveLength(1);
      const passed = await call(new URL(`${strict.baseUrl}/repos/acme/rocket/collaborators/bob`), 'PUT', {
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: Buffer.from('{"permission":"read"}'),
      });
      expect([passed.status, received]).toEqual([204, ['/api/v1/repos/acme/rocket/collaborators/bob']]);
    } finally {
      await strict.close();
      await close(counting.server);
    }
  });
});

describe('an upstream that fails', () => {
  it('resets: 502 naming the problem, and the proxy keeps serving', async () => {
    let calls = 0;
    const upstream = await listen((req, res) => {
      if (calls++ === 0) req.socket.destroy();
      else res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'x-total-count': '0' }).end('[]');
    });
    const { proxy } = await proxyTo(upstream.origin);
    try {
      const failed = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect(failed.status).toBe(502);
      expect(JSON.parse(failed.body)).toEqual({
        message: `the upstream 127.0.0.1:${new URL(upstream.origin).port} failed: ECONNRESET`,
        url: `${proxy.origin}/api/swagger`,
      });
      expect((await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH })).status).toBe(200);
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });

  it('stalls past the timeout: 504', async () => {
    const upstream = await listen(() => {});
    const { proxy } = await proxyTo(upstream.origin, { timeoutMs: 300 });
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect(answer.status).toBe(504);
      expect(JSON.parse(answer.body).message).toBe(
        `the upstream 127.0.0.1:${new URL(upstream.origin).port} sent nothing for 0.3 s`,
      );
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });

  it('refuses connections: 502 ECONNREFUSED', async () => {
    const { proxy } = await proxyTo('http://127.0.0.1:9');
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect([answer.status, JSON.parse(answer.body).message]).toEqual([
        502,
        'the upstream 127.0.0.1:9 failed: ECONNREFUSED',
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('speaks no TLS where https was asked for: 502 with the TLS reason', async () => {
    const plain = await listen((_req, res) => res.end('not tls'));
    const { proxy } = await proxyTo(plain.origin.replace('http:', 'https:'));
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.body).message).toMatch(
        /^the upstream 127\.0\.0\.1:\d+ failed: EPROTO \(TLS: wrong version number: does the server speak plain http\?\)$/,
      );
    } finally {
      await proxy.close();
      await close(plain.server);
    }
  });
});

describe('an upstream whose certificate Node does not accept', () => {
  const orgs = (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json', 'x-total-count': '0' }).end('[]');

  it.each([
    [
      'self-signed',
      'DEPTH_ZERO_SELF_SIGNED_CERT (TLS: self-signed certificate: if you trust the server, set NODE_EXTRA_CA_CERTS to a PEM file of its CA certificate and start again)',
    ],
    ['expired', 'CERT_HAS_EXPIRED (TLS: certificate has expired)'],
  ] as const)('%s: 502 with the TLS reason, and what to try where there is something', async (kind, reason) => {
    const upstream = await startTlsServer(kind, orgs);
    const { proxy } = await proxyTo(upstream.origin);
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect([answer.status, JSON.parse(answer.body).message]).toEqual([
        502,
        `the upstream ${upstream.origin.slice('https://'.length)} failed: ${reason}`,
      ]);
      expect(upstream.paths).toEqual([]);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('self-signed, with its certificate in NODE_EXTRA_CA_CERTS as the advice says: the answer comes through', async () => {
    const upstream = await startTlsServer('self-signed', orgs);
    const cli = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
    // Named, so that the one request this upstream sees is the client's (unnamed, the proxy asks it which it is).
    const named = ['--server', 'gitea-1.27'];
    const proxy = await launch(process.execPath, [cli, 'proxy', upstream.origin, '--port', '0', '--quiet', ...named], {
      ...process.env,
      NODE_EXTRA_CA_CERTS: upstream.caFile,
    });
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/admin/orgs`), 'GET', { headers: AUTH });
      expect([answer.status, answer.body]).toEqual([200, '[]']);
      expect(upstream.paths).toEqual(['/api/v1/admin/orgs']);
    } finally {
      await proxy.stop();
      await upstream.close();
    }
  });
});

describe('secrets and upstreams', () => {
  it('never shows a token, a query token or a secret field in a log line or header', async () => {
    const upstream = await listen((req, res) => {
      req.resume();
      res
        .writeHead(400, { 'content-type': 'application/json;charset=utf-8' })
        .end('{"message":"invalid variable or secret name","url":"https://gitea.example.org/api/swagger"}');
    });
    const { proxy, lines } = await proxyTo(upstream.origin);
    const secretValue = 'zz-secret-field-value-77';
    try {
      const answer = await call(new URL(`${proxy.baseUrl}/user/actions/secrets/NPM_TOKEN?token=${TOKEN}`), 'PUT', {
        headers: {
          authorization: `Basic ${Buffer.from(`alice:${TOKEN}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: Buffer.from(JSON.stringify({ data: secretValue, unknown: secretValue })),
      });
      // One violation (the unknown field); the upstream's 400 is declared.
      expect(answer.headers['x-contract-violations']).toBe('1');
      expect(lines).toHaveLength(1);
      for (const text of [...lines, JSON.stringify(answer.headers)]) {
        for (const secret of [TOKEN, secretValue, Buffer.from(`alice:${TOKEN}`).toString('base64')])
          expect(text).not.toContain(secret);
      }
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });

  it.each([
    ['https://gitea.example.org', false, undefined],
    ['http://127.0.0.1:3000', false, undefined],
    ['http://localhost:3000', false, undefined],
    [
      'http://gitea.example.org',
      false,
      "the upstream http://gitea.example.org is plain http: clients' credentials would cross the network in clear; use https, or --allow-insecure-http",
    ],
    ['http://gitea.example.org', true, undefined],
    [
      'https://gitea.example.org/api/v1',
      false,
      'the upstream is an origin only (such as https://gitea.example.org); /api/v1 is kept from each request',
    ],
    ['https://u:pw@gitea.example.org', false, 'the upstream must not carry credentials: clients send their own'],
    ['gitea.example.org', false, 'the upstream needs an absolute URL, such as https://gitea.example.org'],
  ])('upstream %s (insecure allowed: %s)', (upstream, allowed, refusal) => {
    if (refusal) expect(() => checkUpstream(upstream, allowed)).toThrow(refusal);
    else expect(checkUpstream(upstream, allowed).origin).toBe(new URL(upstream).origin);
  });
});

describe('large bodies stream through', () => {
  it('a 20 MB upload reaches the upstream whole, and the answer is still checked', async () => {
    const hash = createHash('sha256');
    let size = 0;
    const upstream = await listen((req, res) => {
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      req.on('end', () =>
        res.writeHead(201, { 'content-type': 'application/json;charset=utf-8' }).end(
          JSON.stringify({
            id: 13009,
            name: 'big.bin',
            size,
            download_count: 0,
            uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12',
            created_at: '2026-05-04T10:00:00Z',
            browser_download_url: 'https://x/big.bin',
          }),
        ),
      );
    });
    const { proxy, lines } = await proxyTo(upstream.origin);
    try {
      const boundary = 'big-boundary';
      const file = Buffer.alloc(20 * 1024 * 1024, 7);
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="big.bin"\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const answer = await call(
        new URL(`${proxy.baseUrl}/repos/acme/rocket/releases/14001/assets?name=big.bin`),
        'POST',
        { headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` }, body },
      );
      expect(answer.status).toBe(201);
      expect(size).toBe(body.length);
      expect(hash.digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
      expect(lines).toEqual([]);
      expect(answer.headers['x-contract-violations']).toBe('0');
    } finally {
      await proxy.close();
      await close(upstream.server);
    }
  });
});
