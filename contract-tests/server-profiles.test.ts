// The mock as the server a team runs (`server` of startMockServer, `--server` of the bin): its
// version endpoints, the 404 of its router for the operations it lacks, its records and its
// deliveries' headers, each profile's examples and sandbox answers checked against that profile's
// own document (mock/dist/profiles/<name>.json, the overlay of profiles/<name>.yaml applied).
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGiteaClient, SERVER_PROFILES, unwrap, type ServerProfile } from '../src/index.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import {
  createSchemaValidator,
  type DeliveryRecord,
  type JsonObject,
  listOperations,
  mismatches,
} from '../test/support/mock-internals.js';
import { call } from './support/call.js';
import { startHookReceiver, type HookReceiver } from './support/hook-receiver.js';
import { exampleRequest, firstExample } from './support/http.js';
import { launch } from './support/launch.js';
import { startReceiverBin } from './support/receiver-bin.js';
import { SEED_IDS } from './support/seed-ids.js';
import { close, listen } from './support/upstream.js';

const profileFile = (name: ServerProfile): string =>
  fileURLToPath(new URL(`../mock/dist/profiles/${name}.json`, import.meta.url));
const documents = new Map(
  SERVER_PROFILES.map((name) => [name, JSON.parse(readFileSync(profileFile(name), 'utf8')) as JsonObject]),
);
const cli = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const PAGE_NOT_FOUND = '404 page not found\n';

const started: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((each) => each.close()));
});

async function serve(
  options: Parameters<typeof startMockServer>[0],
): Promise<{ mock: MockServer; warnings: string[] }> {
  const warnings: string[] = [];
  const mock = await startMockServer({ port: 0, onWarning: (line) => warnings.push(line), ...options });
  started.push(mock);
  return { mock, warnings };
}

/** Each operation of a profile asked with its example request: the answers that break that profile's document. */
async function brokenAnswers(server: ServerProfile, mock: MockServer, token: string): Promise<string[]> {
  const doc = documents.get(server)!;
  const schemas = createSchemaValidator(doc);
  const broken: string[] = [];
  for (const op of listOperations(doc)) {
    const req = await exampleRequest(doc, mock.baseUrl, op);
    const answer = await call(req.url, req.method, {
      headers: { ...req.headers, authorization: `token ${token}` },
      body: req.body,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers.set(name, `${value}`);
    const found = mismatches(doc, schemas, op, { status: answer.status, headers, body: answer.body });
    const label = `${op.operation.operationId} ${answer.status}`;
    if (answer.status >= 500) broken.push(`${label}: ${answer.body.slice(0, 200)}`);
    for (const { where, problem } of found) broken.push(`${label}: ${where} ${problem}`);
  }
  return broken;
}

describe.each(SERVER_PROFILES)('server %s', (server) => {
  it("the examples' answers are valid against the profile's document", async () => {
    const { mock, warnings } = await serve({ server });
    expect(await brokenAnswers(server, mock, `examples-${server}`)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("the sandbox's answers are valid against the profile's document", async () => {
    const { mock, warnings } = await serve({ server, sandbox: {} });
    expect(await brokenAnswers(server, mock, `sandbox-${server}`)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('serves the operations of its profile, no more', async () => {
    const { mock } = await serve({ server });
    const served = mock.operations.map(({ operationId }) => operationId).sort();
    const documented = listOperations(documents.get(server)!).map((op) => String(op.operation.operationId));
    expect(served).toEqual(documented.sort());
  });
});

describe('server forgejo-11', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, server: 'forgejo-11' });
  });
  afterAll(async () => {
    await mock?.close();
  });
  const token = 'forgejo-eleven';

  it('answers both version endpoints as Forgejo 11 does, the Gitea release it names after a +', async () => {
    for (const path of ['/api/forgejo/v1/version', '/api/v1/version']) {
      const answer = await call(`${mock.origin}${path}`, 'GET', { token });
      expect(answer.status, path).toBe(200);
      expect(JSON.parse(answer.body), path).toEqual({ version: '11.0.1+gitea-1.22.0' });
    }
  });

  it("answers the router's plain-text 404 for E4, E7 and E13, which Forgejo has no route for", async () => {
    const absent = [
      ['DELETE', '/repos/acme/rocket/issues/42/assignees'],
      ['GET', '/packages/acme/npm/rocket-sdk'],
      ['GET', '/repos/acme/rocket/actions/workflows/ci.yml'],
    ] as const;
    for (const [method, path] of absent) {
      const answer = await call(`${mock.baseUrl}${path}`, method, { token, json: { assignees: ['bob'] } });
      expect([answer.status, answer.body], `${method} ${path}`).toEqual([404, PAGE_NOT_FOUND]);
      expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
  });

  it('reads X-Forgejo-OTP as the one-time code, before X-Gitea-OTP, as Forgejo does', async () => {
    const orgs = (headers: Record<string, string>) => call(`${mock.baseUrl}/admin/orgs`, 'GET', { token, headers });
    expect((await orgs({ 'x-forgejo-otp': '123456' })).status).toBe(200);
    const refused = await orgs({ 'x-forgejo-otp': 'not-a-code', 'x-gitea-otp': '123456' });
    expect([refused.status, refused.json.message]).toEqual([401, 'invalid username, password or token']);
    // Gitea reads its own header only.
    const { mock: gitea } = await serve({});
    const ignored = await call(`${gitea.baseUrl}/admin/orgs`, 'GET', {
      token,
      headers: { 'x-forgejo-otp': 'not-a-code' },
    });
    expect(ignored.status).toBe(200);
  });

  it('sends the records Forgejo sends: a user with pronouns, a repository without branch_count', async () => {
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token }, retry: 0 });
    const members = await unwrap(gitea.GET('/teams/{id}/members', { params: { path: { id: 7001 } } }));
    expect(members.length).toBeGreaterThan(0);
    for (const member of members) expect(member).toHaveProperty('pronouns');
    const thread = await call(`${mock.baseUrl}/notifications/threads/10001`, 'PATCH', { token });
    expect(thread.status).toBe(205);
    expect(thread.json.repository).toHaveProperty('globally_editable_wiki', false);
    expect(thread.json.repository).not.toHaveProperty('branch_count');
  });
});

describe('the sandbox as Forgejo 11 sends deliveries with Forgejo headers', () => {
  let hook: HookReceiver;
  beforeAll(async () => {
    hook = await startHookReceiver();
  });
  afterAll(async () => {
    await hook?.close();
  });

  it('X-Forgejo-* and X-Gitea-* besides each other, no installation target type', async () => {
    const { mock } = await serve({ server: 'forgejo-11', sandbox: { webhooks: { secret: 'forgejo-secret' } } });
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token: 'forgejo-hooks' }, retry: 0 });
    const rocket = { owner: 'acme', repo: 'rocket' };
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${hook.origin}/hook`, content_type: 'json' }, events: ['pull_request'] },
      }),
    );
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );
    const log = await call(`${mock.origin}/__sandbox/deliveries?event=pull_request&wait=20`, 'GET', {
      token: 'forgejo-hooks',
    });
    const [logged] = log.json.deliveries as { id: string }[];
    const [delivery] = await hook.waitFor([logged!.id]);
    const headers = delivery!.headers;
    expect(headers['x-forgejo-event']).toBe('pull_request');
    expect(headers['x-forgejo-event-type']).toBe('pull_request');
    expect(headers['x-forgejo-delivery']).toBe(headers['x-gitea-delivery']);
    expect(headers['x-forgejo-signature']).toBe(headers['x-gitea-signature']);
    expect(headers['x-gitea-event']).toBe('pull_request');
    expect(headers).not.toHaveProperty('x-gitea-hook-installation-target-type');
    expect(headers).not.toHaveProperty('x-github-hook-installation-target-type');
  });

  it("writes JSON as Forgejo's json-iterator does, and a create event to a gitea hook again as Forgejo does for Woodpecker", async () => {
    const secret = 'forgejo-json-secret';
    const { mock } = await serve({ server: 'forgejo-11', sandbox: { webhooks: { secret } } });
    const token = 'forgejo-json';
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token }, retry: 0 });
    const rocket = { owner: 'acme', repo: 'rocket' };
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${hook.origin}/hook`, content_type: 'json' }, events: ['pull_request', 'create'] },
      }),
    );
    // The answer: HTML characters escaped, a newline after it (Encoder.Encode).
    const edited = await call(`${mock.baseUrl}/repos/acme/rocket/pulls/43`, 'PATCH', {
      token,
      json: { title: 'a <b> & c' },
    });
    expect(edited.status).toBe(201);
    expect(edited.body).toContain('"title":"a \\u003cb\\u003e \\u0026 c"');
    expect(edited.body.endsWith('}\n')).toBe(true);
    const logged = async (event: string) =>
      (
        await call(`${mock.origin}/__sandbox/deliveries?event=${event}&wait=20`, 'GET', { token })
      ).json.deliveries.filter((each: { hook: { target: string } }) => each.hook.target === 'repository') as {
        id: string;
      }[];
    const [edit] = await logged('pull_request');
    const [pull] = await hook.waitFor([edit!.id]);
    const pullText = Buffer.from(pull!.body).toString();
    expect(pullText).toContain('\n  "action": "edited",');
    expect(pullText).toContain('"title": "a \\u003cb\\u003e \\u0026 c"');
    // A create event for a `gitea` hook: compact, keys sorted, signed as sent.
    const fired = await call(`${mock.origin}/__sandbox/trigger`, 'POST', {
      token,
      json: { event: 'create', repository: 'acme/rocket' },
    });
    expect(fired.status).toBe(201);
    const [created] = await logged('create');
    const [create] = await hook.waitFor([created!.id]);
    const createText = Buffer.from(create!.body).toString();
    const payload = JSON.parse(createText);
    expect(createText).toBe(JSON.stringify(payload));
    expect(Object.keys(payload)).toEqual([...Object.keys(payload)].sort());
    expect(Object.keys(payload.repository)).toEqual([...Object.keys(payload.repository)].sort());
    expect(create!.headers['x-forgejo-signature']).toBe(createHmac('sha256', secret).update(createText).digest('hex'));
  });
});

describe('JSON as each server writes it', () => {
  it('Gitea 1.26 on writes HTML characters as they are and no newline after an answer; Gitea 1.25 escapes them', async () => {
    for (const [server, title, end] of [
      ['gitea-1.27', '"title":"a <b> & c"', '}'],
      ['gitea-1.26', '"title":"a <b> & c"', '}'],
      ['gitea-1.25', '"title":"a \\u003cb\\u003e \\u0026 c"', '}\n'],
    ] as const) {
      const { mock } = await serve({ server, sandbox: {} });
      const edited = await call(`${mock.baseUrl}/repos/acme/rocket/pulls/43`, 'PATCH', {
        token: `json-${server}`,
        json: { title: 'a <b> & c' },
      });
      expect([server, edited.status, edited.body.includes(title), edited.body.endsWith(end)]).toEqual([
        server,
        201,
        true,
        true,
      ]);
      expect(JSON.parse(edited.body).title).toBe('a <b> & c');
    }
  });
});

describe('server gitea-1.24', () => {
  it('answers 1.24.7 at /api/v1/version and the plain-text 404 for E4', async () => {
    const { mock } = await serve({ server: 'gitea-1.24' });
    const version = await call(`${mock.baseUrl}/version`, 'GET', { token: 'old-gitea' });
    expect(version.json).toEqual({ version: '1.24.7' });
    const answer = await call(`${mock.baseUrl}/repos/acme/rocket/issues/42/assignees`, 'DELETE', {
      token: 'old-gitea',
      json: { assignees: ['bob'] },
    });
    expect([answer.status, answer.body]).toEqual([404, PAGE_NOT_FOUND]);
    const forgejo = await call(`${mock.origin}/api/forgejo/v1/version`, 'GET', { token: 'old-gitea' });
    expect(forgejo.status).toBe(404);
  });
});

describe('the sandbox follows the rules of the server it is', () => {
  /** The sandbox as `server`, and a call of it with a credential of one world. */
  async function sandboxOf(server: ServerProfile) {
    const { mock, warnings } = await serve({ server, sandbox: {} });
    const token = `rules-${randomUUID()}`;
    const ask = (method: string, path: string, json?: unknown) =>
      call(`${mock.baseUrl}${path}`, method, { token, ...(json === undefined ? {} : { json }) });
    return { mock, warnings, ask };
  }

  it('gitea-1.25 stores any redirect URI and names a clone address that is no URL', async () => {
    const { ask, warnings } = await sandboxOf('gitea-1.25');
    const app = await ask('POST', '/user/applications/oauth2', { name: 'app', redirect_uris: ['not a uri'] });
    expect([app.status, app.json.redirect_uris]).toEqual([201, ['not a uri']]);
    const migrated = await ask('POST', '/repos/migrate', { clone_addr: 'not a url', repo_name: 'x' });
    expect([migrated.status, migrated.json.message]).toEqual([
      422,
      "migration/cloning from 'not a url' is not allowed: the provided url is invalid",
    ]);
    // The request of a profile without content_version cannot carry one.
    const stale = await ask('PATCH', '/repos/acme/rocket/pulls/43', { title: 'Stale', content_version: 0 });
    expect(stale.status).toBe(422);
    expect(warnings).toEqual([]);
  });

  it('gitea-1.27 refuses both, as the base does, and words a not-found answer as Gitea 1.27', async () => {
    const { ask } = await sandboxOf('gitea-1.27');
    const app = await ask('POST', '/user/applications/oauth2', { name: 'app', redirect_uris: ['not a uri'] });
    expect([app.status, app.json.message]).toEqual([400, 'invalid redirect URI: not a uri']);
    const migrated = await ask('POST', '/repos/migrate', { clone_addr: 'not a url', repo_name: 'x' });
    expect([migrated.status, migrated.json.message]).toEqual([422, 'The provided URL is invalid.']);
    const missing = await ask('GET', '/repos/acme/rocket/keys/99999');
    expect([missing.status, missing.json.message, missing.json.errors]).toEqual([404, 'not found', null]);
  });

  it('gitea-1.24 words a not-found answer as 1.24 does', async () => {
    const { ask } = await sandboxOf('gitea-1.24');
    const missing = await ask('GET', '/repos/acme/rocket/keys/99999');
    expect([missing.status, missing.json.message, missing.json.errors]).toEqual([
      404,
      "The target couldn't be found.",
      null,
    ]);
  });

  it('forgejo-11 stores a hook URL as given and shows it beside the config, renders any mode but comment and gfm as markdown, says not-found as Forgejo does', async () => {
    const { ask, mock, warnings } = await sandboxOf('forgejo-11');
    const hook = await ask('PATCH', '/repos/acme/rocket/hooks/4001', {
      config: { url: 'not a url', content_type: 'form' },
      events: ['push'],
    });
    expect([hook.status, hook.json.config, hook.json.url, hook.json.content_type]).toEqual([
      200,
      { url: 'not a url', content_type: 'form' },
      'not a url',
      'form',
    ]);
    const file = await ask('POST', '/markdown', { Text: '# Title', Mode: 'file' });
    expect([file.status, file.body]).toEqual([200, '<h1>Title</h1>\n']);
    const missing = await ask('GET', '/repos/acme/rocket/keys/99999');
    expect([missing.status, missing.json.message, missing.json.errors]).toEqual([
      404,
      "The target couldn't be found.",
      [],
    ]);
    const preflight = await call(`${mock.baseUrl}/user/gpg_keys`, 'OPTIONS', {
      headers: { origin: 'http://127.0.0.1:5173', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-headers']).toContain('X-Forgejo-OTP');
    expect(warnings).toEqual([]);
  });

  it('forgejo-12 checks the hook URL again', async () => {
    const { ask } = await sandboxOf('forgejo-12');
    const hook = await ask('PATCH', '/repos/acme/rocket/hooks/4001', { config: { url: 'not a url' } });
    expect(hook.status).toBe(422);
  });
});

describe('the server option refuses what names no profile', () => {
  it('an unknown name, listing the profiles', async () => {
    await expect(startMockServer({ port: 0, server: 'gitea-1.99' as ServerProfile })).rejects.toThrow(
      new TypeError(`server must be one of ${SERVER_PROFILES.join(', ')}, not "gitea-1.99"`),
    );
  });

  it('a server and a document at once', async () => {
    await expect(
      startMockServer({ port: 0, server: 'forgejo-11', document: profileFile('forgejo-11') }),
    ).rejects.toThrow(new TypeError('give server or document, not both: a server names its own document'));
  });
});

describe('gitea-mock --server', () => {
  it('runs the examples as the named server', async () => {
    const launched = await launch(process.execPath, [cli, '--port', '0', '--server', 'forgejo-11'], process.env);
    started.push({ close: () => launched.stop() });
    const answer = await call(`${launched.baseUrl}/packages/acme/npm/rocket-sdk`, 'GET', { token: 'bin' });
    expect([answer.status, answer.body]).toEqual([404, PAGE_NOT_FOUND]);
    const version = await call(`${launched.baseUrl}/version`, 'GET', { token: 'bin' });
    expect(version.json).toEqual({ version: '11.0.1+gitea-1.22.0' });
    expect(launched.output()).toContain('(examples, as forgejo-11)');
  });
});

describe('gitea-mock proxy in front of Forgejo 11', () => {
  // A Forgejo 11.0.3 as its structs answer (the forgejo-11 profile's example of E12, every member with
  // `pronouns`): both version endpoints, and the members of team 7001, their first member's pronouns a number
  // when `?broken` is asked.
  const doc = documents.get('forgejo-11')!;
  const members = firstExample(
    doc,
    (doc.paths as any)['/teams/{id}/members'].get.responses['200'].content['application/json'],
  ) as JsonObject[];
  const VERSION = '11.0.3+gitea-1.22.0';
  let upstream: Awaited<ReturnType<typeof listen>>;
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'gitea-contract-profiles-'));
    upstream = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://upstream');
      const json = (body: unknown, headers = {}) =>
        res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', ...headers }).end(JSON.stringify(body));
      if (url.pathname === '/api/forgejo/v1/version' || url.pathname === '/api/v1/version')
        return json({ version: VERSION });
      if (url.pathname !== '/api/v1/teams/7001/members') return res.writeHead(404).end('404 page not found\n');
      const sent = url.searchParams.has('broken') ? [{ ...members[0], pronouns: 42 }, ...members.slice(1)] : members;
      return json(sent, { 'x-total-count': String(sent.length) });
    });
  });
  afterAll(async () => {
    await close(upstream?.server);
    await rm(folder, { recursive: true, force: true });
  });

  it('asks the upstream which it is, checks its answers against forgejo-11 and names it in the report', async () => {
    const report = join(folder, 'forgejo.json');
    const proxy = await launch(process.execPath, [cli, 'proxy', upstream.origin, '--port', '0', '--report', report]);
    started.push({ close: () => proxy.stop() });
    expect(proxy.output()).toContain('checked as forgejo-11 (Forgejo 11.0.3+gitea-1.22.0)');
    const valid = await call(`${proxy.baseUrl}/teams/7001/members`, 'GET', { token: 'proxy-forgejo' });
    expect(valid.status).toBe(200);
    expect(valid.json[0]).toHaveProperty('pronouns');
    expect(valid.headers['x-contract-violations']).toBe('0');
    const badCode = await call(`${proxy.baseUrl}/teams/7001/members`, 'GET', {
      token: 'proxy-forgejo',
      headers: { 'x-forgejo-otp': 'not-a-code' },
    });
    // Refused as Forgejo refuses it, and a breach of the header's declared pattern.
    expect(badCode.headers['x-contract-violations']).toBe('2');
    const broken = await call(`${proxy.baseUrl}/teams/7001/members?broken`, 'GET', { token: 'proxy-forgejo' });
    expect(broken.headers['x-contract-violations']).toBe('1');
    expect(await proxy.stop('SIGTERM')).toBe(0);
    expect(proxy.output()).toContain(
      'contract: orgListTeamMembers GET /api/v1/teams/7001/members: 1 violation: response body /0/pronouns must be string\n',
    );
    expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
      checkedAs: { profile: 'forgejo-11', server: 'Forgejo 11.0.3+gitea-1.22.0' },
      operations: { orgListTeamMembers: { exchanges: 3, withViolations: 2 } },
    });
  });

  it("checked as Gitea 1.27 (--server), the same valid answer breaks the contract: Gitea's User has no pronouns", async () => {
    const proxy = await launch(process.execPath, [
      cli,
      'proxy',
      upstream.origin,
      '--port',
      '0',
      '--server',
      'gitea-1.27',
    ]);
    started.push({ close: () => proxy.stop() });
    expect(proxy.output()).toContain('checked as gitea-1.27)');
    const answer = await call(`${proxy.baseUrl}/teams/7001/members`, 'GET', { token: 'proxy-as-gitea' });
    expect(Number(answer.headers['x-contract-violations'])).toBeGreaterThan(0);
  });
});

describe('gitea-mock verify against Forgejo 11', () => {
  const run = async (args: string[]) => {
    const { verify } = (await import(
      fileURLToPath(new URL('../mock/dist/verify.mjs', import.meta.url))
    )) as typeof import('../mock/src/live/verify.js');
    let out = '';
    const write = (text: string) => void (out += text);
    const code = await verify(args, { GITEA_TOKEN: 'verify-forgejo' }, { stdout: write, stderr: write });
    return { code, out };
  };

  it('tells Forgejo by its version, checks against forgejo-11 and does not run what Forgejo has no route for', async () => {
    const { mock } = await serve({ server: 'forgejo-11', sandbox: {} });
    const { code, out } = await run(['--base-url', mock.baseUrl, ...SEED_IDS]);
    expect(out).toContain('server: Forgejo 11.0.1+gitea-1.22.0\nprofile: forgejo-11\n');
    for (const operationId of ['listPackageVersions', 'ActionsGetWorkflow'])
      expect(out).toMatch(new RegExp(`- ${operationId} +not run: forgejo-11 has no route for it\n`));
    expect(out).toContain('5 of 20 operations checked, 0 with mismatches');
    expect(code).toBe(0);
  });

  it('still finds a wrong type in what a Forgejo answers', async () => {
    const members = firstExample(
      documents.get('forgejo-11')!,
      (documents.get('forgejo-11')!.paths as any)['/teams/{id}/members'].get.responses['200'].content[
        'application/json'
      ],
    ) as JsonObject[];
    const upstream = await listen((req, res) => {
      const json = (body: unknown, headers = {}) =>
        res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', ...headers }).end(JSON.stringify(body));
      if (req.url === '/api/forgejo/v1/version' || req.url === '/api/v1/version')
        return json({ version: '11.0.3+gitea-1.22.0' });
      if (req.url?.startsWith('/api/v1/teams/12001/members'))
        return json([{ ...members[0], pronouns: 42 }], { 'x-total-count': '1' });
      return res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    });
    started.push({ close: () => close(upstream.server) });
    const { code, out } = await run(['--base-url', `${upstream.origin}/api/v1`, '--team-id', '12001']);
    expect(out).toContain('server: Forgejo 11.0.3+gitea-1.22.0\nprofile: forgejo-11\n');
    expect(out).toMatch(/✗ orgListTeamMembers +200 1 mismatch\n {4}body \/0\/pronouns must be string\n/);
    expect(code).toBe(1);
  });
});

describe('gitea-mock webhooks receiving from Forgejo 11', () => {
  const SECRET = 'forgejo-receiver-secret';

  it("takes the sandbox's Forgejo deliveries as Forgejo's, and finds a wrong type in one", async () => {
    const bin = await startReceiverBin([], SECRET);
    const delivered: DeliveryRecord[] = [];
    const { mock } = await serve({
      server: 'forgejo-11',
      sandbox: {
        webhooks: { secret: SECRET, systemHooks: [`${bin.origin}/hook`], onDelivery: (d) => delivered.push(d) },
      },
    });
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token: 'forgejo-receiver' }, retry: 0 });
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { owner: 'acme', repo: 'rocket', index: 43 } },
        body: { state: 'closed' },
      }),
    );
    await expect.poll(() => delivered.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const [first] = delivered;
    expect(first!.status).toBe(200);
    // The same delivery, its sender's pronouns a number, signed again as Forgejo signs it.
    const payload = JSON.parse(first!.body);
    const body = JSON.stringify({ ...payload, sender: { ...payload.sender, pronouns: 42 } }, null, 2);
    const brokenId = randomUUID();
    const sha256 = createHmac('sha256', SECRET).update(body).digest('hex');
    const sha1 = createHmac('sha1', SECRET).update(body).digest('hex');
    const signed = {
      ...first!.headers,
      ...{ 'X-Forgejo-Signature': sha256, 'X-Gitea-Signature': sha256, 'X-Gogs-Signature': sha256 },
      ...{ 'X-Hub-Signature': `sha1=${sha1}`, 'X-Hub-Signature-256': `sha256=${sha256}` },
      ...{ 'X-Forgejo-Delivery': brokenId, 'X-Gitea-Delivery': brokenId },
    };
    const broken = await call(`${bin.origin}/hook`, 'POST', { headers: signed, body });
    expect(broken.headers['x-contract-violations']).toBe('1');
    expect(await bin.stop()).toBe(1);
    expect(bin.output()).toContain(`webhook pull_request closed ${first!.id} (forgejo-11): conforms`);
    expect(bin.output()).toContain(
      `contract: webhook pull_request closed ${brokenId} (forgejo-11): 1 violation: request body /sender/pronouns must be string\n`,
    );
  });
});

describe('gitea-mock/msw as Forgejo 11', () => {
  it('createGiteaHandlers({ server }) answers as that server, and refuses a document beside it', async () => {
    const built = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));
    const { createGiteaHandlers } = (await import(built)) as typeof import('../mock/src/msw/handlers.js');
    const baseUrl = 'https://forgejo.test/api/v1';
    expect(() => createGiteaHandlers({ baseUrl, server: 'forgejo-11', document: profileFile('forgejo-11') })).toThrow(
      new TypeError('give server or document, not both: a server names its own document'),
    );
    const mocked = createGiteaHandlers({ baseUrl, server: 'forgejo-11' });
    const worker = setupServer(...mocked.handlers);
    worker.listen({ onUnhandledRequest: 'error' });
    try {
      const headers = { authorization: 'token msw-forgejo' };
      const absent = await fetch(`${baseUrl}/repos/acme/rocket/actions/workflows/ci.yml`, { headers });
      expect([absent.status, await absent.text()]).toEqual([404, PAGE_NOT_FOUND]);
      const version = await fetch('https://forgejo.test/api/forgejo/v1/version', { headers });
      expect(JSON.parse(await version.text())).toEqual({ version: '11.0.1+gitea-1.22.0' });
    } finally {
      worker.close();
      await mocked.close();
    }
  });
});
