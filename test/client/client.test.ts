// createGiteaClient with an injected fetch: credentials, headers, the clear-text guard and path
// safety, checked on the Request the client really hands to fetch.
import { describe, expect, it, vi } from 'vitest';
import { createGiteaClient } from '../../src/index.js';

const BASE = 'https://gitea.example.org/api/v1';

/** A fetch that records each Request and answers 200 with a JSON body. */
function recorder(body: unknown = { id: 11001 }) {
  const requests: Request[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(new Request(input, init));
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, requests, calls: fetch };
}

const getKey = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } } as const;

describe('credentials', () => {
  it('sends a token as "Authorization: token …"', async () => {
    const { fetch, requests } = recorder();
    const client = createGiteaClient({ baseUrl: BASE, auth: { token: 'abc123def' }, fetch });
    await client.GET('/repos/{owner}/{repo}/keys/{id}', getKey);
    expect(requests[0]!.headers.get('authorization')).toBe('token abc123def');
    expect(requests[0]!.url).toBe(`${BASE}/repos/acme/rocket/keys/11001`);
  });

  it('sends HTTP Basic that decodes to the exact UTF-8 user name and password', async () => {
    const { fetch, requests } = recorder();
    const password = 'pä$$wörd: ✓ 密码';
    const client = createGiteaClient({ baseUrl: BASE, auth: { username: 'zoë', password }, fetch });
    await client.GET('/admin/orgs');
    const header = requests[0]!.headers.get('authorization')!;
    expect(header).toMatch(/^Basic [A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(header.slice(6), 'base64').toString('utf8')).toBe(`zoë:${password}`);
  });

  it('adds X-Gitea-OTP from a string or from a function called for each request', async () => {
    const { fetch, requests } = recorder();
    const codes = ['111111', '222222'];
    const client = createGiteaClient({
      baseUrl: BASE,
      auth: { username: 'alice', password: 'secret-pw', otp: () => codes.shift()! },
      fetch,
    });
    await client.GET('/admin/orgs');
    await client.GET('/admin/orgs');
    expect(requests.map((r) => r.headers.get('x-gitea-otp'))).toEqual(['111111', '222222']);
    const fixed = createGiteaClient({
      baseUrl: BASE,
      auth: { username: 'alice', password: 'secret-pw', otp: '333333' },
      fetch,
    });
    await fixed.GET('/admin/orgs');
    expect(requests[2]!.headers.get('x-gitea-otp')).toBe('333333');
  });

  it('sends Sudo when asked to act as another user', async () => {
    const { fetch, requests } = recorder();
    await createGiteaClient({ baseUrl: BASE, auth: { token: 'admintoken', sudo: 'bob' }, fetch }).GET('/admin/orgs');
    expect(requests[0]!.headers.get('sudo')).toBe('bob');
  });

  it('sends no Authorization without auth', async () => {
    const { fetch, requests } = recorder();
    await createGiteaClient({ baseUrl: 'http://gitea.example.org/api/v1', fetch }).GET('/admin/orgs');
    expect(requests[0]!.headers.has('authorization')).toBe(false);
  });
});

describe('no credentials in clear text', () => {
  it('refuses credentials for a plain-http host with a TypeError before anything is sent', () => {
    const { fetch, calls } = recorder();
    expect(() =>
      createGiteaClient({ baseUrl: 'http://gitea.example.org/api/v1', auth: { token: 'abc123def' }, fetch }),
    ).toThrow(TypeError);
    expect(() =>
      createGiteaClient({ baseUrl: 'http://gitea.example.org/api/v1', auth: { token: 'abc123def' }, fetch }),
    ).toThrow(/https/);
    expect(calls).not.toHaveBeenCalled();
  });

  it('refuses a per-request baseUrl on plain http too', async () => {
    const { fetch, calls } = recorder();
    const client = createGiteaClient({ baseUrl: BASE, auth: { token: 'abc123def' }, fetch });
    await expect(client.GET('/admin/orgs', { baseUrl: 'http://evil.example.net/api/v1' })).rejects.toThrow(TypeError);
    expect(calls).not.toHaveBeenCalled();
  });

  it.each([
    'http://localhost:4010/api/v1',
    'http://127.0.0.1:4010/api/v1',
    'http://127.8.9.10/api/v1',
    'http://[::1]:4010/api/v1',
  ])('allows loopback %s', async (baseUrl) => {
    const { fetch, calls } = recorder();
    await createGiteaClient({ baseUrl, auth: { token: 'abc123def' }, fetch }).GET('/admin/orgs');
    expect(calls).toHaveBeenCalledOnce();
  });

  it('allows any plain-http host with allowInsecureHttp', async () => {
    const { fetch, calls } = recorder();
    await createGiteaClient({
      baseUrl: 'http://gitea.lan/api/v1',
      auth: { token: 'abc123def' },
      fetch,
      allowInsecureHttp: true,
    }).GET('/admin/orgs');
    expect(calls).toHaveBeenCalledOnce();
  });
});

describe('headers', () => {
  it('sends extra headers and a User-Agent when given', async () => {
    const { fetch, requests } = recorder();
    await createGiteaClient({ baseUrl: BASE, fetch, headers: { 'X-Request-Id': 'r-1' }, userAgent: 'my-app/1.0' }).GET(
      '/admin/orgs',
    );
    expect(requests[0]!.headers.get('x-request-id')).toBe('r-1');
    expect(requests[0]!.headers.get('user-agent')).toBe('my-app/1.0');
  });

  it.each([
    ['a line break', 'ci-bot\r\nX-Injected: 1', 'userAgent contains a line break'],
    ['a number', 5, 'userAgent is not a string'],
  ])('refuses a User-Agent with %s when the client is made, not at the first call', (_case, userAgent, message) => {
    const { fetch, calls } = recorder();
    expect(() => createGiteaClient({ baseUrl: BASE, userAgent: userAgent as string, fetch })).toThrow(
      new TypeError(message),
    );
    expect(calls).not.toHaveBeenCalled();
  });

  it('refuses a fetch that is not a function when the client is made', () => {
    expect(() => createGiteaClient({ baseUrl: BASE, fetch: 'https://gitea.example.org' as never })).toThrow(
      new TypeError('fetch is not a function'),
    );
  });

  it('sends query parameters and JSON bodies as openapi-fetch does', async () => {
    const { fetch, requests } = recorder({});
    const client = createGiteaClient({ baseUrl: BASE, fetch });
    await client.GET('/admin/orgs', { params: { query: { page: 2, limit: 50 } } });
    await client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } },
      body: { active: false },
    });
    expect(new URL(requests[0]!.url).search).toBe('?page=2&limit=50');
    expect(requests[1]!.method).toBe('PATCH');
    expect(requests[1]!.headers.get('content-type')).toBe('application/json');
    expect(await requests[1]!.json()).toEqual({ active: false });
  });
});

describe('path safety', () => {
  const client = () => {
    const rec = recorder();
    return { ...rec, client: createGiteaClient({ baseUrl: BASE, fetch: rec.fetch }) };
  };

  it.each(['.', '..', ''])('refuses %j as a path parameter with a TypeError, sending nothing', async (value) => {
    const { client: c, calls } = client();
    const call = c.GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: value, repo: 'rocket', id: 1 } },
    });
    await expect(call).rejects.toThrow(TypeError);
    await expect(call).rejects.toThrow(/owner/);
    expect(calls).not.toHaveBeenCalled();
  });

  it('refuses a missing path parameter', async () => {
    const { client: c, calls } = client();
    const path = { owner: 'acme', repo: 'rocket' };
    // @ts-expect-error the type forbids it; plain JavaScript callers get a TypeError
    await expect(c.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path } })).rejects.toThrow(/id is missing/);
    expect(calls).not.toHaveBeenCalled();
  });

  it('percent-encodes everything else, so no value can climb out of its segment', async () => {
    const { client: c, requests } = client();
    for (const owner of ['../admin', 'a/b', 'a b?#', 'ü', '%2e%2e', '...']) {
      await c.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner, repo: 'rocket', id: 1 } } });
    }
    expect(requests.map((r) => new URL(r.url).pathname)).toEqual([
      '/api/v1/repos/..%2Fadmin/rocket/keys/1',
      '/api/v1/repos/a%2Fb/rocket/keys/1',
      '/api/v1/repos/a%20b%3F%23/rocket/keys/1',
      '/api/v1/repos/%C3%BC/rocket/keys/1',
      '/api/v1/repos/%252e%252e/rocket/keys/1',
      '/api/v1/repos/.../rocket/keys/1',
    ]);
  });
});

describe('the client object', () => {
  it('has no untyped request(method, path) that would bypass path safety', () => {
    const client = createGiteaClient({ baseUrl: BASE, fetch: recorder().fetch });
    expect('request' in client).toBe(false);
    expect(typeof client.GET).toBe('function');
  });
});

describe('the global fetch', () => {
  it('is looked up at each call, so one replaced after the client was made (MSW, vi.stubGlobal) is used', async () => {
    const client = createGiteaClient({ baseUrl: BASE, auth: { token: 'abc' } });
    const replaced = vi.fn(
      async () => new Response('{"version":"1.27.1"}', { headers: { 'content-type': 'application/json' } }),
    );
    vi.stubGlobal('fetch', replaced);
    try {
      const { data } = await client.GET('/repos/{owner}/{repo}/keys/{id}', {
        params: { path: { owner: 'acme', repo: 'rocket', id: 1 } },
      });
      expect(data).toEqual({ version: '1.27.1' });
      expect(replaced).toHaveBeenCalledOnce();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
