// The launcher behind `npm start` and `gitea-mock`, started in-process on a free port: it must
// behave like a Gitea host (prefix, credentials, one error dialect, paging, CORS). Hostile input
// is mock-hostile.test.ts's, against the built bin.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isObject, listOperations, loadDocument } from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { call } from './support/call.js';
import { BASIC_ALICE, exampleRequest } from './support/http.js';

const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
let mock: MockServer;

beforeAll(async () => {
  mock = await startMockServer({ port: 0 });
});
afterAll(async () => {
  await mock?.close();
});

const TOKEN = { authorization: 'token 0123456789abcdef' };
const url = (path: string): URL => new URL(`${mock.baseUrl}${path}`);
const get = (path: string, headers: Record<string, string> = TOKEN) => call(url(path), 'GET', { headers });
const json = (body: string): unknown => JSON.parse(body) as unknown;

/** The service's error body, with the mock's own documentation address. */
function expectApiError(
  answer: { status: number; headers: Record<string, unknown>; body: string },
  status: number,
  message?: string | RegExp,
): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
  const body = json(answer.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(status === 404 ? ['errors', 'message', 'url'] : ['message', 'url']);
  expect(body.url).toBe(`${mock.origin}/api/swagger`);
  if (typeof message === 'string') expect(body.message).toBe(message);
  else if (message) expect(body.message).toMatch(message);
}

function patchHook(body: string, headers: Record<string, string> = {}) {
  return call(url('/repos/acme/rocket/hooks/4001'), 'PATCH', {
    headers: { ...TOKEN, 'content-type': 'application/json', ...headers },
    body: Buffer.from(body),
  });
}

describe('serves the contract under /api/v1', () => {
  it('answers all 20 operations with their success status', async () => {
    const operations = listOperations(doc);
    expect(operations).toHaveLength(20);
    for (const op of operations) {
      const req = await exampleRequest(doc, mock.baseUrl, op);
      const answer = await call(req.url, req.method, { headers: req.headers, body: req.body });
      const responses = isObject(op.operation.responses) ? Object.keys(op.operation.responses).map(Number) : [];
      const success = Math.min(...responses.filter((code) => code < 300));
      expect(answer.status, `${req.method} ${req.url.pathname}`).toBe(success);
    }
  });

  it('labels JSON as Gitea does and, as its official builds (Go JSON v2), ends the body without a newline', async () => {
    const answer = await get('/repos/acme/rocket/keys/11001');
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.body.endsWith('}')).toBe(true);
    expect((json(answer.body) as { id: number }).id).toBe(11001);
  });

  it('answers paths outside /api/v1 with the not-found body', async () => {
    for (const path of ['/admin/orgs', '/api/v2/admin/orgs', '/api/v1', '/api/v1x/admin/orgs', '/']) {
      const answer = await call(new URL(`${mock.origin}${path}`), 'GET', { headers: TOKEN });
      expectApiError(answer, 404, 'not found');
    }
  });

  it('answers GET /version as Gitea does, without credentials: the release the document describes, marked as the mock', async () => {
    const answer = await get('/version', {});
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(json(answer.body)).toEqual({ version: `${(doc.info as { version: string }).version}+gitea-contract-mock` });
    expect((await call(url('/version'), 'HEAD')).status).toBe(200);
    const post = await call(url('/version'), 'POST', { headers: TOKEN });
    expectApiError(post, 405, 'POST is not allowed on /api/v1/version; allowed: GET, OPTIONS');
    expect(post.headers.allow).toBe('GET, OPTIONS');
  });

  it('answers an unknown route inside /api/v1 with the not-found body', async () => {
    expectApiError(await get('/repos/acme/rocket/nothing-here'), 404, 'not found');
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const answer = await call(url('/repos/acme/rocket/hooks/4001'), 'DELETE', { headers: TOKEN });
    expectApiError(answer, 405, /DELETE is not allowed/);
    expect(answer.headers.allow).toBe('PATCH, OPTIONS');
  });
});

describe('answers checked against the document', () => {
  it('warns of an example that breaks its schema, after sending it as the document has it', async () => {
    // The document with one example broken: the deploy key's title a number.
    const dir = await mkdtemp(join(tmpdir(), 'gitea-contract-broken-'));
    const broken = join(dir, 'openapi.yaml');
    const text = await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8');
    expect(text).toContain('        title: ci-runner\n');
    await writeFile(broken, text.replace('        title: ci-runner\n', '        title: 42\n'));
    const warnings: string[] = [];
    const other = await startMockServer({ port: 0, document: broken, onWarning: (line) => warnings.push(line) });
    try {
      const answer = await call(new URL(`${other.baseUrl}/repos/acme/rocket/keys/11001`), 'GET', { headers: TOKEN });
      expect(answer.status).toBe(200);
      expect((json(answer.body) as { title: unknown }).title).toBe(42);
      await expect
        .poll(() => warnings)
        .toEqual([expect.stringMatching(/^repoGetKey 200: the answer breaks the document: .*title/)]);
      // A conforming answer earns no warning.
      expect((await call(new URL(`${other.baseUrl}/admin/orgs`), 'GET', { headers: TOKEN })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warnings).toHaveLength(1);
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('credentials', () => {
  it('refuses a request without Authorization with 401 "token is required" and, as Gitea, no WWW-Authenticate', async () => {
    const answer = await get('/admin/orgs', {});
    expectApiError(answer, 401, 'token is required');
    expect(answer.headers['www-authenticate']).toBeUndefined();
  });

  it.each([
    ['a scheme alone', 'Basic'],
    ['three parts', 'token abc def'],
    ['an unknown scheme', 'Digest username="alice"'],
    ['Basic that is not base64', 'Basic !!!notbase64'],
    ['Basic without a colon', `Basic ${Buffer.from('alice').toString('base64')}`],
    ['Basic with an empty user', `Basic ${Buffer.from(':secret').toString('base64')}`],
  ])('refuses %s with "invalid username, password or token"', async (_what, value) => {
    const answer = await get('/admin/orgs', { authorization: value });
    expectApiError(answer, 401, 'invalid username, password or token');
    expect(answer.headers['www-authenticate']).toBeUndefined();
  });

  it('refuses a one-time code that is not six digits', async () => {
    expectApiError(
      await get('/admin/orgs', { ...TOKEN, 'x-gitea-otp': '12ab' }),
      401,
      'invalid username, password or token',
    );
  });

  it.each([
    ['Basic', BASIC_ALICE],
    ['Basic with a UTF-8 password', `Basic ${Buffer.from('alice:pässwörd✓').toString('base64')}`],
    ['token', 'token 0123456789abcdef'],
    ['Bearer', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig'],
    ['a scheme in upper case', 'TOKEN 0123456789abcdef'],
  ])('accepts %s', async (_what, value) => {
    expect((await get('/admin/orgs', { authorization: value, 'x-gitea-otp': '123456' })).status).toBe(200);
  });
});

describe('one error dialect', () => {
  it('a body that breaks the schema: 422 naming the field', async () => {
    expectApiError(await patchHook('{"active":"yes"}'), 422, /body\.active.*boolean/);
  });

  it('an unknown enum value: 422 naming the allowed ones', async () => {
    const answer = await call(url('/repos/acme/rocket/collaborators/bob'), 'PUT', {
      headers: { ...TOKEN, 'content-type': 'application/json' },
      body: Buffer.from('{"permission":"owner"}'),
    });
    expectApiError(answer, 422, /permission.*read, write, admin/);
  });

  it('a missing required field: 422', async () => {
    const answer = await call(url('/repos/migrate'), 'POST', {
      headers: { ...TOKEN, 'content-type': 'application/json' },
      body: Buffer.from('{"repo_name":"launchpad"}'),
    });
    expectApiError(answer, 422, /clone_addr/);
  });

  it('a field the document does not know: 422', async () => {
    expectApiError(await patchHook('{"actve":true}'), 422, /actve/);
  });

  it('a body without Content-Type: 422 "Empty Content-Type"', async () => {
    const answer = await call(url('/markdown'), 'POST', { headers: TOKEN, body: Buffer.from('{"Text":"hi"}') });
    expectApiError(answer, 422, '[]: Empty Content-Type');
  });

  it('a content type the operation does not take: 422 "Unsupported Content-Type"', async () => {
    const answer = await call(url('/markdown'), 'POST', {
      headers: { ...TOKEN, 'content-type': 'text/plain' },
      body: Buffer.from('hi'),
    });
    expectApiError(answer, 422, /Unsupported Content-Type/);
  });

  it('an Accept the operation cannot meet: 406 in the service dialect', async () => {
    const answer = await call(url('/markdown'), 'POST', {
      headers: { ...TOKEN, 'content-type': 'application/json', accept: 'application/xml' },
      body: Buffer.from('{"Text":"hi"}'),
    });
    expectApiError(answer, 406);
  });
});

describe('Prefer picks a documented response', () => {
  it('code=404 on issueListIssueCommentAttachments answers the literal null the server sends', async () => {
    const answer = await get('/repos/acme/rocket/issues/comments/15001/assets', { ...TOKEN, prefer: 'code=404' });
    expect(answer.status).toBe(404);
    expect(answer.body).toBe('null');
  });

  it('example=otherRepository answers that named example with its status', async () => {
    const answer = await get('/repos/acme/rocket/issues/comments/15001/assets', {
      ...TOKEN,
      prefer: 'example=otherRepository',
    });
    expect(answer.status).toBe(404);
    expect((json(answer.body) as { message: string }).message).toBe('no matching issue comment found');
  });

  it('code and example together, in one header', async () => {
    const answer = await get('/admin/orgs', { ...TOKEN, prefer: 'code=401, example=invalidCredentials' });
    expect(answer.status).toBe(401);
    expect((json(answer.body) as { message: string }).message).toBe('invalid username, password or token');
  });

  it("code=204 picks updateUserSecret's update answer over the default 201", async () => {
    const put = (prefer?: string) =>
      call(url('/user/actions/secrets/DEPLOY_TOKEN'), 'PUT', {
        headers: { ...TOKEN, 'content-type': 'application/json', ...(prefer ? { prefer } : {}) },
        body: Buffer.from('{"data":"s3cr3t"}'),
      });
    expect((await put()).status).toBe(201);
    const updated = await put('code=204');
    expect(updated.status).toBe(204);
    expect(updated.body).toBe('');
  });

  it('an undocumented code answers 400 naming the documented ones', async () => {
    expectApiError(
      await get('/admin/orgs', { ...TOKEN, prefer: 'code=418' }),
      400,
      'Prefer: code=418 is not documented for adminGetAllOrgs; documented: 200, 401, 403, 404, 500, 503',
    );
  });

  it('an undocumented example answers 400 naming the documented ones', async () => {
    const answer = await get('/repos/acme/rocket/issues/comments/15001/assets', { ...TOKEN, prefer: 'example=nope' });
    expectApiError(answer, 400, /example=nope is not documented.*unknownComment, otherRepository, notFound/);
  });

  it('an example of another status than the code asked for answers 400', async () => {
    expectApiError(
      await get('/admin/orgs', { ...TOKEN, prefer: 'code=200, example=notSiteAdmin' }),
      400,
      /adminGetAllOrgs 200; documented examples: organizations/,
    );
  });

  it('a malformed code answers 400', async () => {
    expectApiError(await get('/admin/orgs', { ...TOKEN, prefer: 'code=abc' }), 400, /three-digit status/);
  });
});

describe('pagination on listPackageVersions, orgListTeamMembers and adminGetAllOrgs', () => {
  const names = (body: string): string[] =>
    (json(body) as { name?: string; login?: string }[]).map((o) => o.name ?? o.login ?? '');
  const link = (page: number, limit = 2) => `${mock.baseUrl}/admin/orgs?limit=${limit}&page=${page}`;

  it('answers everything on one page without Link by default', async () => {
    const answer = await get('/admin/orgs');
    expect(names(answer.body)).toEqual(['acme', 'bluebird', 'copperhead', 'driftwood', 'ember']);
    expect(answer.headers['x-total-count']).toBe('5');
    expect(answer.headers.link).toBeUndefined();
  });

  it('slices by page and limit and links next and last from the first page', async () => {
    const answer = await get('/admin/orgs?limit=2');
    expect(names(answer.body)).toEqual(['acme', 'bluebird']);
    expect(answer.headers['x-total-count']).toBe('5');
    expect(answer.headers.link).toBe(`<${link(2)}>; rel="next",<${link(3)}>; rel="last"`);
  });

  it('links all four neighbours from a middle page', async () => {
    const answer = await get('/admin/orgs?limit=2&page=2');
    expect(names(answer.body)).toEqual(['copperhead', 'driftwood']);
    expect(answer.headers.link).toBe(
      `<${link(3)}>; rel="next",<${link(3)}>; rel="last",<${link(1)}>; rel="first",<${link(1)}>; rel="prev"`,
    );
  });

  it('links first and prev from the last page', async () => {
    const answer = await get('/admin/orgs?limit=2&page=3');
    expect(names(answer.body)).toEqual(['ember']);
    expect(answer.headers.link).toBe(`<${link(1)}>; rel="first",<${link(2)}>; rel="prev"`);
  });

  it('answers an empty page past the end, with links from the last page', async () => {
    const answer = await get('/admin/orgs?limit=2&page=9');
    expect(json(answer.body)).toEqual([]);
    expect(answer.headers['x-total-count']).toBe('5');
    expect(answer.headers.link).toBe(
      `<${mock.baseUrl}/admin/orgs?limit=2&page=1>; rel="first",<${mock.baseUrl}/admin/orgs?limit=2&page=2>; rel="prev"`,
    );
  });

  it('pages team members and package versions too', async () => {
    const members = await get('/teams/12001/members?limit=2&page=2');
    expect(names(members.body)).toEqual(['carol']);
    expect(members.headers['x-total-count']).toBe('3');
    const versions = await get('/packages/acme/npm/rocket-sdk?limit=1');
    expect((json(versions.body) as { version: string }[]).map((v) => v.version)).toEqual(['1.2.0']);
    expect(versions.headers.link).toContain('rel="next"');
  });

  it('builds links on the host the client used', async () => {
    const answer = await get('/admin/orgs?limit=2', { ...TOKEN, host: 'localhost:4010' });
    expect(answer.headers.link).toContain('<http://localhost:4010/api/v1/admin/orgs?limit=2&page=2>; rel="next"');
  });
});

describe('CORS for browser apps', () => {
  const origin = 'http://localhost:5173';

  it('answers a preflight allowing Gitea request headers, with credentials', async () => {
    const answer = await call(url('/admin/orgs'), 'OPTIONS', {
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization,x-gitea-otp,sudo',
      },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(origin);
    expect(answer.headers['access-control-allow-credentials']).toBe('true');
    const allowed = String(answer.headers['access-control-allow-headers']).toLowerCase();
    for (const header of ['authorization', 'x-gitea-otp', 'sudo', 'content-type']) expect(allowed).toContain(header);
    expect(answer.headers['access-control-allow-methods']).toContain('PATCH');
  });

  it('allows any header a preflight asks for, when the list is header names and at most 2048 characters', async () => {
    const preflight = (requested: string) =>
      call(url('/admin/orgs'), 'OPTIONS', {
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': requested,
        },
      });
    const asked = await preflight('authorization,traceparent,x-request-id');
    expect(asked.status).toBe(204);
    expect([asked.headers['access-control-allow-origin'], asked.headers['access-control-allow-credentials']]).toEqual([
      origin,
      'true',
    ]);
    expect(String(asked.headers['access-control-allow-headers']).toLowerCase().split(', ')).toEqual(
      expect.arrayContaining(['authorization', 'traceparent', 'x-request-id']),
    );
    const gitea = 'Authorization, Content-Type, X-Gitea-OTP, Sudo, Prefer, Accept';
    const longest = `x-request-id,${'x'.repeat(2048 - 'x-request-id,'.length)}`;
    expect(String((await preflight(longest)).headers['access-control-allow-headers'])).toContain('x-request-id');
    // Past the bound, or anything but header names: Gitea's own headers only, and the browser refuses the request.
    for (const requested of [
      `${longest}x`,
      'x-request-id,not a name',
      'x-request-id,<script>',
      'x-request-id,"quoted"',
    ]) {
      expect((await preflight(requested)).headers['access-control-allow-headers'], requested.slice(0, 40)).toBe(gitea);
    }
  });

  it('echoes the origin and exposes the paging headers on answers, errors included', async () => {
    for (const headers of [{ ...TOKEN, origin }, { origin }]) {
      const answer = await get('/admin/orgs?limit=2', headers);
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
      expect(answer.headers['access-control-allow-credentials']).toBe('true');
      expect(answer.headers.vary).toContain('Origin');
      expect(answer.headers['access-control-expose-headers']).toMatch(/Link.*X-Total-Count/);
    }
  });

  it('sends no CORS headers to requests without Origin', async () => {
    expect((await get('/admin/orgs')).headers['access-control-allow-origin']).toBeUndefined();
  });
});
