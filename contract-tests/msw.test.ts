// `gitea-mock/msw` as a frontend test suite uses it: MSW's setupServer with the handlers of the
// built package (mock/dist/msw.mjs), the client calling a host that does not exist, no port
// opened. The handlers answer as the server does because they are its front: credentials,
// validation, the error dialect, `Prefer`, paging on the host the client used, the sandbox's worlds.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { ApiError, createGiteaClient, paginate } from '../src/index.js';

type MswModule = typeof import('../mock/src/msw/handlers.js');
const BUILT = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));
const { createGiteaHandlers } = (await import(BUILT)) as MswModule;

const BASE = 'https://gitea.example.org/api/v1';
const DOCS = 'https://gitea.example.org/api/swagger';
const client = (token: string) => createGiteaClient({ baseUrl: BASE, auth: { token } });
const members = async (token: string) =>
  (await client(token).GET('/teams/{id}/members', { params: { path: { id: 12001 } } })).data?.map((user) => user.login);

/** Serves `gitea`'s handlers through setupServer for the describe it is called in, refusing any request they do not answer. */
function served(gitea: ReturnType<typeof createGiteaHandlers>): void {
  const server = setupServer(...gitea.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterAll(async () => {
    server.close();
    await gitea.close();
  });
}

describe('createGiteaHandlers with the sandbox, in setupServer', () => {
  const gitea = createGiteaHandlers({
    baseUrl: BASE,
    sandbox: {
      // A seed of the test's own: carol is called caroline in every world.
      prepare: (seed) => {
        const carol = seed.users.find((user) => user.login === 'carol')!;
        Object.assign(carol, { login: 'caroline', username: 'caroline' });
      },
    },
  });
  served(gitea);
  afterEach(() => gitea.reset());

  it('keeps a write for the credential that made it, and only for it', async () => {
    const renamed = await client('alice-screen').POST('/admin/users/{username}/rename', {
      params: { path: { username: 'bob' } },
      body: { new_username: 'robert' },
    });
    expect(renamed.response.status).toBe(204);
    expect(await members('alice-screen')).toEqual(['alice', 'robert', 'caroline']);
    expect(await members('another-screen')).toEqual(['alice', 'bob', 'caroline']);
    // What a test asserts on: the world as it is now.
    const world = await gitea.world({ token: 'alice-screen' });
    expect(world?.users.map((user) => user.login)).toContain('robert');
    expect((await gitea.world('token another-screen'))?.users.map((user) => user.login)).toContain('bob');
  });

  it('reset() brings every world back to the seed', async () => {
    await client('alice-screen').POST('/admin/users/{username}/rename', {
      params: { path: { username: 'bob' } },
      body: { new_username: 'robert' },
    });
    await gitea.reset();
    expect(await members('alice-screen')).toEqual(['alice', 'bob', 'caroline']);
  });

  it('answers no credentials 401, a body that breaks the document 422 and an unknown id 404, in the service dialect', async () => {
    const anonymous = await fetch(`${BASE}/teams/12001/members`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ message: 'token is required', url: DOCS });

    const invalid = await client('alice-screen').PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
      params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
      body: { permission: 'owner' as never },
    });
    expect(invalid.response.status).toBe(422);
    expect(invalid.error).toEqual({ message: expect.stringContaining('permission'), url: DOCS });

    const unknown = await client('alice-screen').GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 999_999 } },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ message: expect.any(String), url: DOCS });
  });

  it('throws the client its ApiError as a real server would', async () => {
    const strict = createGiteaClient({ baseUrl: BASE, auth: { token: 'alice-screen' }, throwOnError: true });
    const failure = await strict
      .GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'nope', id: 11001 } } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(404);
  });

  it('answers the sandbox reset route on the host, and /version without credentials', async () => {
    await client('alice-screen').POST('/admin/users/{username}/rename', {
      params: { path: { username: 'bob' } },
      body: { new_username: 'robert' },
    });
    const reset = await fetch('https://gitea.example.org/__sandbox/reset', {
      method: 'POST',
      headers: { authorization: 'token alice-screen' },
    });
    expect(reset.status).toBe(200);
    expect(await members('alice-screen')).toEqual(['alice', 'bob', 'caroline']);
    expect(await (await fetch(`${BASE}/version`)).json()).toEqual({ version: '1.27.0+gitea-contract-mock' });
  });
});

describe('createGiteaHandlers with the examples', () => {
  const gitea = createGiteaHandlers({ baseUrl: BASE });
  served(gitea);

  it('pages with Link headers built on the base URL, as the server does', async () => {
    const first = await client('x').GET('/admin/orgs', { params: { query: { limit: 2 } } });
    expect(first.data).toHaveLength(2);
    expect(first.response.headers.get('x-total-count')).toBe('5');
    expect(first.response.headers.get('link')).toContain(`<${BASE}/admin/orgs?limit=2&page=2>; rel="next"`);
    const names: string[] = [];
    for await (const org of paginate(client('x'), '/admin/orgs', { params: { query: { limit: 2 } } }))
      names.push(org.name ?? '');
    expect(names).toHaveLength(5);
  });

  it('answers the documented example that Prefer asks for', async () => {
    const answer = await client('x').GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
      headers: { Prefer: 'code=404' },
    });
    expect(answer.response.status).toBe(404);
    expect(answer.error).toMatchObject({ url: DOCS });
  });
});

describe('createGiteaHandlers with a relative base URL', () => {
  // In Node there is no page: /api/v1 on any host is the app's own API, as in a browser on the page's.
  const gitea = createGiteaHandlers({ baseUrl: '/api/v1' });
  served(gitea);

  it('answers /api/v1 on the host the app asks, with links built on it', async () => {
    const answer = await fetch('http://app.localhost:5173/api/v1/admin/orgs?limit=2', {
      headers: { authorization: 'token x' },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('link')).toContain(
      '<http://app.localhost:5173/api/v1/admin/orgs?limit=2&page=2>; rel="next"',
    );
    // Not the API: MSW's onUnhandledRequest: 'error' refuses it, and says so on the console.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const outside = await fetch('http://app.localhost:5173/api/v1x/admin/orgs').catch((error: unknown) => error);
      expect(String(outside)).toContain('Cannot bypass a request');
      expect(printed.mock.calls.flat().join('\n')).toContain(
        'intercepted a request without a matching request handler:\n\n  • GET http://app.localhost:5173/api/v1x/admin/orgs',
      );
    } finally {
      printed.mockRestore();
    }
  });
});

describe('createGiteaHandlers with a document given as data', () => {
  // What a browser build takes instead of a file path: here the package's document without listPackageVersions's path.
  const document = parse(readFileSync(new URL('../openapi.yaml', import.meta.url), 'utf8'), { maxAliasCount: -1 }) as {
    paths: Record<string, unknown>;
  };
  delete document.paths['/admin/orgs'];
  const gitea = createGiteaHandlers({ baseUrl: BASE, document });
  served(gitea);

  it('answers the operations of that document, and no other', async () => {
    const key = await client('x').GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
    });
    expect(key.response.status).toBe(200);
    expect((await client('x').GET('/admin/orgs')).response.status).toBe(404);
  });
});

describe('createGiteaHandlers options', () => {
  it('refuses a base URL that does not end in /api/v1, saying so', () => {
    expect(() => createGiteaHandlers({ baseUrl: 'https://gitea.example.org/api' })).toThrow(
      'baseUrl must end in /api/v1',
    );
    expect(() => createGiteaHandlers({ baseUrl: 'ftp://gitea.example.org/api/v1' })).toThrow(TypeError);
  });
});

describe('the browser build', () => {
  it('has beside it the licence of every package it bundles, and says where on its first line', () => {
    const bundle = readFileSync(new URL('../mock/dist/msw.browser.mjs', import.meta.url), 'utf8');
    const licences = readFileSync(new URL('../mock/dist/msw.browser.licenses.txt', import.meta.url), 'utf8');
    expect(bundle.split('\n')[0]).toContain('msw.browser.licenses.txt');
    const bundled = new Set(
      [...bundle.matchAll(/^\/\/#region .*?node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map(([, name]) => name!),
    );
    const listed = new Set(
      [...licences.matchAll(/^((?:@[^/\s]+\/)?[^@\s]+)@\d[^ ]* \(([^)]+)\)$/gm)].map(([, name]) => name!),
    );
    expect(bundled.size).toBeGreaterThan(40);
    expect([...bundled].filter((name) => !listed.has(name))).toEqual([]);
    // Prism's own, under Apache-2.0, with its licence's text.
    expect(licences).toMatch(/^@stoplight\/prism-http@\S+ \(Apache-2\.0\)\n={72}\n\n\s*Apache License/m);
  });
});
