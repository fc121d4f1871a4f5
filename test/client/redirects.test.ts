// Redirects: the client follows one itself only while it stays on the server the request went to
// (the same origin, or http: to https: on the same host name), changing the method as fetch does;
// one anywhere else ends the call with an ApiError, and nothing (credential headers, body) arrives
// there. Real HTTP on loopback: two servers on two ports, which are two origins.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, collectAll, createGiteaClient, unwrap, type GiteaClient } from '../../src/index.js';
import { apiErrorOf } from '../support/api-error.js';
import {
  json,
  raw,
  startFaultServer,
  useFaultServer,
  type FaultServer,
  type Handler,
} from '../support/fault-server.js';
import { startTlsServer } from '../support/tls-server.js';

const gitea = useFaultServer();
let elsewhere: FaultServer;
beforeAll(async () => {
  elsewhere = await startFaultServer();
});
afterEach(() => elsewhere.clear());
afterAll(() => elsewhere.close());

const PASSWORD = 'pw-redirect-SECRET-9d2';
const OTP = '424242';
const API_KEY = 'key-redirect-SECRET-77a';
const PRIVATE_TOKEN = 'private-redirect-SECRET-31c';
const SECRET_DATA = 'ci-deploy-SECRET-data-5e0';
const HOOK_HEADER = 'Bearer hook-SECRET-header-8b1';

/** A client that sends every kind of secret: Basic, a one-time code, Sudo, two credential headers. */
function client({ throwOnError = false, middleware = false } = {}): GiteaClient {
  const made = createGiteaClient({
    baseUrl: gitea.current.baseUrl,
    auth: { username: 'alice', password: PASSWORD, otp: OTP, sudo: 'bob' },
    headers: { 'X-Api-Key': API_KEY, 'Private-Token': PRIVATE_TOKEN },
    retry: { retries: 2, baseDelayMs: 1 },
    throwOnError,
  });
  if (middleware) made.use({ onRequest: () => undefined });
  return made;
}

const redirect = (status: number, location: string): Handler => raw(status, '', { location });
const origin = (server: FaultServer): string => new URL(server.baseUrl).origin;
const host = (server: FaultServer): string => new URL(server.baseUrl).host;

/** The calls whose bodies hold secrets: updateUserSecret's secret value and repoEditHook's authorization header. */
const SECRET_CALLS = {
  'PUT /user/actions/secrets/{secretname} (updateUserSecret)': (c: GiteaClient) =>
    c.PUT('/user/actions/secrets/{secretname}', {
      params: { path: { secretname: 'DEPLOY_KEY' } },
      body: { data: SECRET_DATA },
    }),
  'PATCH /repos/{owner}/{repo}/hooks/{id} (repoEditHook)': (c: GiteaClient) =>
    c.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } },
      body: { authorization_header: HOOK_HEADER },
    }),
};

describe('a redirect to another origin is not followed', () => {
  describe.each([301, 302, 303, 307, 308])('%i', (status) => {
    it.each(Object.keys(SECRET_CALLS) as (keyof typeof SECRET_CALLS)[])(
      '%s: nothing arrives there; { error } is an ApiError naming where it led',
      async (name) => {
        // A query and a path that must never be quoted: they may hold a token.
        gitea.current.script(redirect(status, `${origin(elsewhere)}/api/v1/collect/private-path?token=query-SECRET`));
        const { data, error, response } = await SECRET_CALLS[name](client());
        expect(elsewhere.received).toEqual([]);
        expect(gitea.current.received).toHaveLength(1);
        expect(data).toBeUndefined();
        expect(response.status).toBe(status);
        expect(error).toBeInstanceOf(ApiError);
        const failure = error as unknown as ApiError;
        expect(failure.status).toBe(status);
        expect(failure.message).toBe(
          `${name}: ${status} redirect to ${origin(elsewhere)} not followed: it leaves ${host(gitea.current)}`,
        );
      },
    );
  });

  it('throws that ApiError with throwOnError, and through unwrap', async () => {
    const location = `${origin(elsewhere)}/api/v1/collect`;
    gitea.current.script(redirect(307, location), redirect(307, location));
    const call = SECRET_CALLS['PUT /user/actions/secrets/{secretname} (updateUserSecret)'];
    const thrown = await apiErrorOf(call(client({ throwOnError: true })));
    const unwrapped = await apiErrorOf(unwrap(call(client())));
    for (const error of [thrown, unwrapped])
      expect(error.message).toBe(
        `PUT /user/actions/secrets/{secretname} (updateUserSecret): 307 redirect to ${origin(elsewhere)} not followed: it leaves ${host(gitea.current)}`,
      );
    expect(elsewhere.received).toEqual([]);
  });

  it('with middleware on too (real Requests)', async () => {
    gitea.current.script(redirect(308, `${origin(elsewhere)}/api/v1/collect`));
    const error = await apiErrorOf(
      unwrap(SECRET_CALLS['PATCH /repos/{owner}/{repo}/hooks/{id} (repoEditHook)'](client({ middleware: true }))),
    );
    expect(error.status).toBe(308);
    expect(elsewhere.received).toEqual([]);
  });

  it('names a Location that is no URL without quoting it', async () => {
    gitea.current.script(redirect(302, 'http://[token-SECRET/api/v1'));
    const error = await apiErrorOf(unwrap(client().GET('/admin/orgs')));
    expect(error.message).toBe(
      'GET /admin/orgs (adminGetAllOrgs): 302 redirect not followed: its Location is not a URL',
    );
  });

  it('ends a redirect loop after 20 hops', async () => {
    gitea.current.script(...Array.from({ length: 30 }, () => redirect(302, '/api/v1/admin/orgs')));
    const error = await apiErrorOf(unwrap(client().GET('/admin/orgs')));
    expect(error.message).toBe(
      `GET /admin/orgs (adminGetAllOrgs): 302 redirect to ${origin(gitea.current)} not followed: more than 20 redirects in a row`,
    );
    expect(gitea.current.received).toHaveLength(21);
  });

  it('paginate never leaves the base URL: a page that redirects elsewhere is an ApiError', async () => {
    const next = `<${gitea.current.baseUrl}/admin/orgs?page=2>; rel="next"`;
    gitea.current.script(
      json(200, [{ id: 1, name: 'acme' }], { link: next }),
      redirect(302, `${origin(elsewhere)}/api/v1/admin/orgs?page=2`),
    );
    const error = await collectAll(client(), '/admin/orgs').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(302);
    expect(elsewhere.received).toEqual([]);
  });
});

describe.each([
  ['without middleware', false],
  ['with middleware (real Requests)', true],
])('a redirect on the same server is followed, %s', (_mode, middleware) => {
  // Gitea redirects the old name of a renamed repository (301 for GET, 307 for the rest) or owner
  // (307), with a Location on its own host.
  const MOVED = '/api/v1/repos/acme/rocket-renamed';
  const hook = { params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } } } as const;
  const markdown = { Text: '# moved', Mode: 'markdown' } as const;
  it.each([
    [
      301,
      'GET',
      'GET',
      undefined,
      (c: GiteaClient) =>
        c.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }),
    ],
    [
      307,
      'PATCH',
      'PATCH',
      '{"active":false}',
      (c: GiteaClient) => c.PATCH('/repos/{owner}/{repo}/hooks/{id}', { ...hook, body: { active: false } }),
    ],
    [
      308,
      'POST',
      'POST',
      JSON.stringify(markdown),
      (c: GiteaClient) => c.POST('/markdown', { body: markdown, parseAs: 'text' }),
    ],
    [
      301,
      'PUT',
      'PUT',
      '{"data":"x1y2"}',
      (c: GiteaClient) =>
        c.PUT('/user/actions/secrets/{secretname}', {
          params: { path: { secretname: 'DEPLOY_KEY' } },
          body: { data: 'x1y2' },
        }),
    ],
    [301, 'POST', 'GET', undefined, (c: GiteaClient) => c.POST('/markdown', { body: markdown, parseAs: 'text' })],
    [302, 'POST', 'GET', undefined, (c: GiteaClient) => c.POST('/markdown', { body: markdown, parseAs: 'text' })],
    [
      303,
      'PATCH',
      'GET',
      undefined,
      (c: GiteaClient) => c.PATCH('/repos/{owner}/{repo}/hooks/{id}', { ...hook, body: { active: false } }),
    ],
  ] as const)('%i after a %s: then %s with body %j', async (status, method, then, body, call) => {
    gitea.current.script(redirect(status, `${MOVED}/next?x=1`), json(200, { id: 1 }));
    const { response } = await call(client({ middleware }));
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${origin(gitea.current)}${MOVED}/next?x=1`);
    const [first, second] = gitea.current.received;
    expect([first!.method, second!.method, second!.url]).toEqual([method, then, `${MOVED}/next?x=1`]);
    expect(second!.body.toString()).toBe(body ?? '');
    // A body-less request describes no body.
    expect(second!.headers['content-type']).toBe(body === undefined ? undefined : 'application/json');
    // The same server: the credentials go along.
    expect([second!.headers.authorization, second!.headers['x-gitea-otp'], second!.headers.sudo]).toEqual([
      first!.headers.authorization,
      OTP,
      'bob',
    ]);
  });

  it('303 after a HEAD stays a HEAD', async () => {
    gitea.current.script(redirect(303, MOVED), raw(200, ''));
    await (client({ middleware }) as unknown as Record<string, (path: string) => Promise<unknown>>).HEAD!(
      '/admin/orgs',
    );
    expect(gitea.current.received.map((r) => r.method)).toEqual(['HEAD', 'HEAD']);
  });

  it('retries and redirects in one call send the same body each time', async () => {
    gitea.current.script(json(503, {}), redirect(307, MOVED), json(503, {}), raw(204, ''));
    const { response } = await client({ middleware }).PUT('/user/actions/secrets/{secretname}', {
      params: { path: { secretname: 'DEPLOY_KEY' } },
      body: { data: 'x1y2' },
    });
    expect(response.status).toBe(204);
    expect(gitea.current.received.map((r) => [r.method, r.url, r.body.toString()])).toEqual([
      ['PUT', '/api/v1/user/actions/secrets/DEPLOY_KEY', '{"data":"x1y2"}'],
      ['PUT', '/api/v1/user/actions/secrets/DEPLOY_KEY', '{"data":"x1y2"}'],
      ['PUT', MOVED, '{"data":"x1y2"}'],
      ['PUT', MOVED, '{"data":"x1y2"}'],
    ]);
  });

  it('paginate follows a page that moved on the same server', async () => {
    const next = `<${gitea.current.baseUrl}/admin/orgs?page=2>; rel="next"`;
    gitea.current.script(
      json(200, [{ id: 1, name: 'acme' }], { link: next }),
      redirect(301, '/api/v1/admin/orgs?page=2&moved=1'),
      json(200, [{ id: 2, name: 'bluebird' }]),
    );
    const names = (await collectAll(client({ middleware }), '/admin/orgs')).map((org) => org.name);
    expect(names).toEqual(['acme', 'bluebird']);
    expect(gitea.current.received.map((r) => r.url)).toEqual([
      '/api/v1/admin/orgs?page=1',
      '/api/v1/admin/orgs?page=2',
      '/api/v1/admin/orgs?page=2&moved=1',
    ]);
  });
});

describe("a call's own redirect mode", () => {
  it("redirect: 'manual' hands the redirect back unfollowed, Location readable", async () => {
    gitea.current.script(redirect(307, `${origin(elsewhere)}/api/v1/collect`));
    const result = await client().GET('/admin/orgs', { redirect: 'manual' });
    expect(result.response.status).toBe(307);
    expect(result.response.headers.get('location')).toBe(`${origin(elsewhere)}/api/v1/collect`);
    expect((await apiErrorOf(unwrap(Promise.resolve(result)))).message).toBe(
      'GET /admin/orgs (adminGetAllOrgs): 307 Temporary Redirect',
    );
    expect(gitea.current.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
  });

  it("redirect: 'error' rejects as fetch does", async () => {
    gitea.current.script(redirect(301, '/api/v1/admin/orgs?page=2'));
    const noRetry = createGiteaClient({ baseUrl: gitea.current.baseUrl, retry: 0 });
    await expect(noRetry.GET('/admin/orgs', { redirect: 'error' })).rejects.toThrow(TypeError);
    expect(gitea.current.received).toHaveLength(1);
  });
});

describe('http: to https: on the same host name', () => {
  // Node trusts the test's certificate only through NODE_EXTRA_CA_CERTS, read at start-up: the
  // built client runs in a child process of its own.
  const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
  const SCRIPT = `
    const { createGiteaClient } = await import(process.argv[1]);
    const results = [];
    for (const baseUrl of process.argv.slice(2)) {
      const gitea = createGiteaClient({ baseUrl, auth: { token: 'tok-upgrade-4f1e9a' }, retry: 0 });
      const { data, error, response } = await gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } });
      results.push({ status: response.status, url: response.url, data, message: error?.message });
    }
    console.log(JSON.stringify(results));`;

  it('is followed; back from https: to plain http: is not', async () => {
    const authorizations: (string | undefined)[] = [];
    let tlsRequests = 0;
    const path = '/api/v1/repos/acme/rocket/keys/11001';
    const tls = await startTlsServer('self-signed', (req, res) => {
      authorizations.push(req.headers.authorization);
      // First the end of the upgrade; then the start of the downgrade.
      if (tlsRequests++ === 0) res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":11001}');
      else res.writeHead(301, { location: `${origin(gitea.current)}${path}` }).end();
    });
    try {
      gitea.current.script(redirect(301, `${tls.origin}${path}`));
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--input-type=module', '-e', SCRIPT, BUILT, gitea.current.baseUrl, `${tls.origin}/api/v1`],
          { env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caFile }, timeout: 20_000 },
          (error, out) => (error ? reject(error) : resolve(out)),
        ),
      );
      const [upgraded, downgraded] = JSON.parse(stdout) as {
        status: number;
        url: string;
        data?: unknown;
        message?: string;
      }[];
      expect(upgraded).toEqual({ status: 200, url: `${tls.origin}${path}`, data: { id: 11001 } });
      expect(downgraded).toEqual({
        status: 301,
        url: `${tls.origin}${path}`,
        message: `GET /repos/{owner}/{repo}/keys/{id} (repoGetKey): 301 redirect to ${origin(gitea.current)} not followed: it would go from https to plain http`,
      });
      expect(authorizations).toEqual(['token tok-upgrade-4f1e9a', 'token tok-upgrade-4f1e9a']);
      // The plain-http server saw the first request only.
      expect(gitea.current.received).toHaveLength(1);
    } finally {
      await tls.close();
    }
  });
});
