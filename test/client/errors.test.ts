// ApiError for every body Gitea sends with an error, unwrap and throwOnError, and the promise
// that no credential appears in any rendering of an error. Real HTTP on loopback.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiError, createGiteaClient, markNotificationThread, renderMarkdown, unwrap } from '../../src/index.js';
import { apiErrorOf } from '../support/api-error.js';
import { json, raw, useFaultServer } from '../support/fault-server.js';

const fault = useFaultServer();

const TOKEN = 'tok-9f8e7d6c5b4a';
const PASSWORD = 'hunter2-but-longer';
const OTP = '424242';
const SWAGGER = 'http://127.0.0.1/api/swagger';
const keyPath = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } } as const;

const client = () => createGiteaClient({ baseUrl: fault.current.baseUrl, auth: { token: TOKEN }, retry: 0 });

describe('ApiError for every error body the service sends', () => {
  it('JSON {message, url}: the message, status, method, path, operationId, url, headers and body', async () => {
    fault.current.script(
      json(
        403,
        { message: 'user should be an owner or a collaborator with admin write of a repository', url: SWAGGER },
        { 'x-gitea-trace': 't1' },
      ),
    );
    const error = await apiErrorOf(unwrap(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath)));
    expect(error.status).toBe(403);
    expect(error.method).toBe('GET');
    expect(error.path).toBe('/repos/{owner}/{repo}/keys/{id}');
    expect(error.operationId).toBe('repoGetKey');
    expect(error.url).toBe(`${fault.current.baseUrl}/repos/acme/rocket/keys/11001`);
    expect(error.headers.get('x-gitea-trace')).toBe('t1');
    expect(error.body).toEqual({
      message: 'user should be an owner or a collaborator with admin write of a repository',
      url: SWAGGER,
    });
    expect(error.message).toBe(
      'GET /repos/{owner}/{repo}/keys/{id} (repoGetKey): 403 user should be an owner or a collaborator with admin write of a repository',
    );
    expect(error.name).toBe('ApiError');
    expect(error).toBeInstanceOf(Error);
  });

  it('the not-found body with its errors list', async () => {
    fault.current.script(json(404, { errors: null, message: 'not found', url: SWAGGER }));
    const error = await apiErrorOf(unwrap(client().GET('/teams/{id}/members', { params: { path: { id: 12001 } } })));
    expect(error.status).toBe(404);
    expect(error.body).toEqual({ errors: null, message: 'not found', url: SWAGGER });
    expect(error.message).toMatch(/\(orgListTeamMembers\): 404 not found$/);
  });

  it('an empty 403 (issueRemoveAssignees and repoEditPullRequest send no body): the status text', async () => {
    fault.current.script(raw(403, ''));
    const error = await apiErrorOf(
      unwrap(
        client().PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { owner: 'acme', repo: 'rocket', index: 43 } },
          body: { title: 'x' },
        }),
      ),
    );
    expect(error.status).toBe(403);
    expect(error.body).toBeUndefined();
    expect(error.message).toMatch(/\(repoEditPullRequest\): 403 Forbidden$/);
  });

  it('an empty 404 without Content-Length', async () => {
    fault.current.script((_req, res) => {
      res.writeHead(404, { 'transfer-encoding': 'chunked' });
      res.end();
    });
    const error = await apiErrorOf(unwrap(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath)));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/404 Not Found$/);
  });

  it('the literal null of issueListIssueCommentAttachments', async () => {
    fault.current.script(raw(404, 'null', { 'content-type': 'application/json;charset=utf-8' }));
    const error = await apiErrorOf(
      unwrap(
        client().GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', {
          params: { path: { owner: 'acme', repo: 'rocket', id: 15099 } },
        }),
      ),
    );
    expect(error.status).toBe(404);
    expect(error.body).toBeNull();
    expect(error.operationId).toBe('issueListIssueCommentAttachments');
  });

  it('a text/plain error of renderMarkdown', async () => {
    fault.current.script(
      raw(422, 'unsupported render mode: slides\n', { 'content-type': 'text/plain; charset=utf-8' }),
    );
    const error = await apiErrorOf(renderMarkdown(client(), { Text: '# hi', Mode: 'wiki' }));
    expect(error.status).toBe(422);
    expect(error.body).toBe('unsupported render mode: slides\n');
    expect(error.message).toMatch(/\(renderMarkdown\): 422 unsupported render mode: slides$/);
  });

  it('malformed JSON in a 2xx answer: an ApiError with the status, not a bare SyntaxError', async () => {
    fault.current.script(raw(200, '{"id": 11001, "title": ', { 'content-type': 'application/json' }));
    const error = await apiErrorOf(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath));
    expect(error.status).toBe(200);
    expect(error.message).toMatch(/\(repoGetKey\): 200 unreadable JSON/);
  });

  it('JSON cut short by a dropped connection: an error, never a hang', async () => {
    fault.current.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id": 11001, "ti');
      setTimeout(() => res.destroy(), 20);
    });
    await expect(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath)).rejects.toThrow();
  });

  it('a 205 with a body (notifyReadThread): no error; the thread when the body can be read, else undefined', async () => {
    fault.current.script(json(205, { id: 10001, unread: false }), json(205, { id: 10001, unread: false }));
    const viaClient = await client().PATCH('/notifications/threads/{id}', { params: { path: { id: '10001' } } });
    expect(viaClient.response.status).toBe(205);
    expect(viaClient.data).toBeUndefined();
    // Node's fetch drops 205 bodies, so the helper can only say "no thread"; it must not throw.
    await expect(markNotificationThread(client(), { id: 10001, toStatus: 'read' })).resolves.toBeUndefined();
    expect(fault.current.received.at(-1)!.url).toBe('/api/v1/notifications/threads/10001?to-status=read');
  });
});

describe('{ error } in the default mode always has a message', () => {
  // `if (error) console.error(error.message)` must catch every non-2xx answer: a body that is not
  // the service's JSON error comes as the ApiError, which `error.message` reads as well.
  it.each([
    [
      'the plain text of a crash',
      raw(500, 'Internal Server Error', { 'content-type': 'text/plain; charset=utf-8' }),
      500,
      'Internal Server Error',
      'Internal Server Error',
    ],
    ['an empty 403 with Content-Length 0', raw(403, ''), 403, 'Forbidden', undefined],
    [
      'an empty 404 without Content-Length',
      (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(404, { 'transfer-encoding': 'chunked' });
        res.end();
      },
      404,
      'Not Found',
      '',
    ],
    [
      'the literal null of issueListIssueCommentAttachments',
      raw(404, 'null', { 'content-type': 'application/json;charset=utf-8' }),
      404,
      'Not Found',
      null,
    ],
  ] as const)('%s', async (_name, answer, status, text, body) => {
    fault.current.script(answer);
    const { data, error, response } = await client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    expect(data).toBeUndefined();
    expect(response.status).toBe(status);
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.message).toBe(`GET /repos/{owner}/{repo}/keys/{id} (repoGetKey): ${status} ${text}`);
    expect((error as ApiError).body).toBe(body);
  });

  it("the service's JSON error body comes as it was sent", async () => {
    fault.current.script(json(404, { errors: null, message: 'not found', url: SWAGGER }));
    const { error } = await client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    expect(error).toEqual({ errors: null, message: 'not found', url: SWAGGER });
    expect(error).not.toBeInstanceOf(ApiError);
  });
});

describe('a base URL without /api/v1', () => {
  const origin = () => fault.current.baseUrl.replace(/\/api\/v1$/, '');
  const hint = () =>
    `the base URL ${origin()} does not end in /api/v1, where Gitea serves its API: try ${origin()}/api/v1`;
  const at = (baseUrl: string) => createGiteaClient({ baseUrl, auth: { token: TOKEN }, retry: 0 });

  it('a 404 says so, returned and thrown, whatever its body', async () => {
    fault.current.script(
      json(404, { errors: null, message: 'not found', url: SWAGGER }),
      raw(404, '<!DOCTYPE html><title>Page Not Found - Gitea</title>', { 'content-type': 'text/html' }),
    );
    const { error } = await at(`${origin()}/`).GET('/repos/{owner}/{repo}/keys/{id}', keyPath);
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.message).toBe(`GET /repos/{owner}/{repo}/keys/{id} (repoGetKey): 404 not found; ${hint()}`);
    const thrown = await apiErrorOf(unwrap(at(origin()).GET('/admin/orgs')));
    expect(thrown.message).toMatch(new RegExp(`: 404 <!DOCTYPE html>.*; ${hint().replace(/[.?/]/g, '\\$&')}$`));
    expect(fault.current.received.map(({ url }) => url)).toEqual(['/repos/acme/rocket/keys/11001', '/admin/orgs']);
  });

  it('a web page answered where JSON belongs says so', async () => {
    // Gitea's web routes send a sign-in page, after a redirect the client follows on the same host.
    fault.current.script(raw(200, '<!DOCTYPE html><title>Sign In - Gitea</title>', { 'content-type': 'text/html' }));
    const error = await apiErrorOf(at(origin()).GET('/admin/orgs'));
    expect(error.message).toBe(
      `GET /admin/orgs (adminGetAllOrgs): 200 unreadable JSON: the body is not valid JSON; ${hint()}`,
    );
  });

  it("a call's own base URL is the one judged; under /api/v1 a 404 is only a 404", async () => {
    fault.current.script(
      json(404, { message: 'not found', url: SWAGGER }),
      json(404, { message: 'not found', url: SWAGGER }),
    );
    const { error } = await client().GET('/repos/{owner}/{repo}/keys/{id}', { ...keyPath, baseUrl: origin() });
    expect(error?.message).toMatch(/; the base URL .* does not end in \/api\/v1/);
    const { error: plain } = await at(origin()).GET('/repos/{owner}/{repo}/keys/{id}', {
      ...keyPath,
      baseUrl: `${origin()}/api/v1/`,
    });
    expect(plain).toEqual({ message: 'not found', url: SWAGGER });
  });
});

describe('unwrap and throwOnError', () => {
  it('unwrap resolves to the data of a 2xx answer', async () => {
    fault.current.script(json(200, { id: 11001, title: 'ci-runner' }));
    await expect(unwrap(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath))).resolves.toEqual({
      id: 11001,
      title: 'ci-runner',
    });
  });

  it('unwrap resolves to undefined for a 204', async () => {
    fault.current.script(raw(204, ''));
    await expect(
      unwrap(
        client().POST('/admin/users/{username}/rename', {
          params: { path: { username: 'bob' } },
          body: { new_username: 'robert' },
        }),
      ),
    ).resolves.toBeUndefined();
  });

  it('without throwOnError a non-2xx answer is returned as { error, response }', async () => {
    fault.current.script(json(422, { message: '[NewName]: Required', url: SWAGGER }));
    const result = await client().POST('/admin/users/{username}/rename', {
      params: { path: { username: 'bob' } },
      body: { new_username: '' },
    });
    expect(result.error).toEqual({ message: '[NewName]: Required', url: SWAGGER });
    expect(result.response.status).toBe(422);
  });

  it('with throwOnError every non-2xx answer throws an ApiError', async () => {
    fault.current.script(json(409, { message: 'The repository with the same name already exists.', url: SWAGGER }));
    const throwing = createGiteaClient({ baseUrl: fault.current.baseUrl, auth: { token: TOKEN }, throwOnError: true });
    const error = await apiErrorOf(
      throwing.POST('/repos/migrate', {
        body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'launchpad' },
      }),
    );
    expect(error.status).toBe(409);
    expect(error.operationId).toBe('repoMigrate');
  });
});

describe('no credential in any rendering of an error', () => {
  function renderings(error: ApiError): string[] {
    return [
      error.message,
      String(error),
      error.toString(),
      JSON.stringify(error),
      inspect(error, { depth: 10 }),
      inspect(error.toJSON(), { depth: 10 }),
      String(error.stack),
    ];
  }

  it('a server that echoes the token, the password and the one-time code back', async () => {
    const basic = Buffer.from(`alice:${PASSWORD}`).toString('base64');
    const echo = `bad token ${TOKEN}, password ${PASSWORD}, otp ${OTP}, header Basic ${basic}`;
    fault.current.script(
      json(401, { message: echo, url: SWAGGER, detail: { nested: [echo] } }),
      json(401, { message: echo, url: SWAGGER }),
    );
    const byToken = await apiErrorOf(unwrap(client().GET('/admin/orgs', { params: { query: { page: 1 } } })));
    const byPassword = await apiErrorOf(
      unwrap(
        createGiteaClient({
          baseUrl: fault.current.baseUrl,
          auth: { username: 'alice', password: PASSWORD, otp: () => OTP },
          retry: 0,
        }).GET('/admin/orgs'),
      ),
    );
    // Each client scrubs the credentials it holds.
    for (const [error, secrets] of [
      [byToken, [TOKEN]],
      [byPassword, [PASSWORD, OTP, basic]],
    ] as const) {
      for (const text of renderings(error)) {
        for (const secret of secrets) expect(text).not.toContain(secret);
      }
      expect(error.message).toContain('[REDACTED]');
    }
  });

  it('{ error } returned in the default mode is redacted as a thrown error is, however the server wrote the secret', async () => {
    // README's first example prints error.message. Go escapes & as \u0026; an upstream may lower-case.
    const password = 'p&ss-SECRET-wd';
    const goEscaped = password.replace('&', '\\u0026');
    fault.current.script(
      json(401, { message: `token echo: "${TOKEN.toUpperCase()}"`, url: SWAGGER }),
      raw(500, `upstream: {"message":"bad password ${goEscaped}"}`, { 'content-type': 'text/plain' }),
    );
    const { error } = await client().GET('/admin/orgs');
    expect(error).toEqual({ message: 'token echo: "[REDACTED]"', url: SWAGGER });
    const byPassword = createGiteaClient({
      baseUrl: fault.current.baseUrl,
      auth: { username: 'alice', password },
      retry: 0,
    });
    // A plain-text answer comes as the ApiError, whose message holds the text.
    const { error: plain } = await byPassword.GET('/admin/orgs');
    expect(plain).toBeInstanceOf(ApiError);
    expect(plain?.message).toBe(
      'GET /admin/orgs (adminGetAllOrgs): 500 upstream: {"message":"bad password [REDACTED]"}',
    );
  });

  it('a token in the query string of the request URL', async () => {
    fault.current.script(json(403, { message: 'nope', url: SWAGGER }));
    // The deprecated ?token= query still works on Gitea; the client redacts it from errors.
    const error = await apiErrorOf(
      unwrap(client().GET('/admin/orgs', { params: { query: { token: TOKEN } as never } })),
    );
    expect(error.url).toBe(`${fault.current.baseUrl}/admin/orgs?token=[REDACTED]`);
    for (const text of renderings(error)) expect(text).not.toContain(TOKEN);
  });

  it('a request sent with Authorization leaves no trace of it in the error', async () => {
    fault.current.script(json(500, { message: '', url: SWAGGER }));
    const error = await apiErrorOf(unwrap(client().GET('/admin/orgs')));
    expect(fault.current.received.at(-1)!.headers.authorization).toBe(`token ${TOKEN}`);
    expect(error.message).toMatch(/500 Internal Server Error$/);
    for (const text of renderings(error)) expect(text).not.toContain(TOKEN);
  });
});

describe('unreadable answers', () => {
  it('a broken JSON body that echoes the token does not leak it through the parse error', async () => {
    // V8 quotes a short unparsable body in its error message.
    fault.current.script(raw(200, TOKEN, { 'content-type': 'application/json' }));
    const error = await apiErrorOf(client().GET('/repos/{owner}/{repo}/keys/{id}', keyPath));
    expect(error.status).toBe(200);
    expect(error.message).toContain('is not valid JSON');
    for (const text of [error.message, String(error), JSON.stringify(error), inspect(error)])
      expect(text).not.toContain(TOKEN);
  });
});
