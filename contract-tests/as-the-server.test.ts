// Where the service description says nothing, the mock answers as Gitea does (its code at
// f26f71f1b2, test/service-facts.json): values the server refuses nowhere (`x-lenient`: ids that
// are no number, paging values, hook events, notification statuses, package kinds), bodies as its
// binding reads them, the names and sizes its handlers check, an upload of any media type, and
// addresses as it checks them. Against the examples mock and the sandbox where both answer.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import {
  createSchemaValidator,
  deref,
  describeViolation,
  isObject,
  type JsonObject,
  listOperations,
  mismatches,
  operationParameters,
} from '../test/support/mock-internals.js';
import { doc } from './support/coverage.js';
import { call, type Reply } from './support/call.js';
import { exampleRequest, firstExample } from './support/http.js';
import { useSandbox } from './support/sandbox.js';

const facts = JSON.parse(readFileSync(new URL('../test/service-facts.json', import.meta.url), 'utf8')) as {
  lenient: Record<string, Record<string, string>>;
};

const sandbox = useSandbox({
  maxWorlds: 50,
  // Sixty more organizations, so that a page of the largest size is full.
  prepare: (seed) => {
    const [template] = seed.orgs;
    for (let n = 0; n < 60; n++)
      seed.orgs.push({ ...template, id: 90_000 + n, name: `zeta-${n}`, username: `zeta-${n}` });
  },
});

const json = { 'content-type': 'application/json' };
const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const parsed = (answer: Reply): unknown => (answer.body === '' ? undefined : JSON.parse(answer.body));

/** The JSON media of a documented status of an operation. */
function mediaOf(operation: JsonObject, status: string): JsonObject {
  const response = deref(doc, (operation.responses as JsonObject)[status], '').value as JsonObject;
  return (response.content as JsonObject)['application/json'] as JsonObject;
}

/** Sends to the examples mock (`examples`) or the sandbox, below /api/v1. */
function at(where: 'examples' | 'sandbox', method: string, path: string, headers = {}, payload?: Buffer) {
  const base = where === 'examples' ? inject('mockBaseUrl') : sandbox.current.baseUrl;
  return call(`${base}${path}`, method, { token: `as-the-server-${where}`, headers, body: payload });
}

describe('ids in the path that are no number name nothing: 404, as an unknown id', () => {
  // The operations whose integer ids the facts call lenient: each example request, its id spelt out.
  const cases = listOperations(doc).flatMap((op) =>
    operationParameters(doc, op)
      .filter(({ param }) => {
        const schema = isObject(param.schema) ? param.schema : {};
        return param.in === 'path' && schema.type === 'integer' && schema['x-lenient'] === true;
      })
      .map(({ param }) => ({ op, name: String(param.name) })),
  );

  it('covers every id the facts call lenient', () => {
    const ids = Object.entries(facts.lenient).flatMap(([, places]) =>
      Object.keys(places).filter((place) => place === 'path.id' || place === 'path.index'),
    );
    expect(cases).toHaveLength(ids.length);
  });

  for (const { op, name } of cases) {
    const id = String(op.operation.operationId);
    const documented = firstExample(doc, mediaOf(op.operation, '404'));

    it(`${id} {${name}} "eleven": the examples mock answers its first 404, the sandbox what Gitea answers`, async () => {
      for (const where of ['examples', 'sandbox'] as const) {
        const base = where === 'examples' ? inject('mockBaseUrl') : sandbox.current.baseUrl;
        const request = await exampleRequest(doc, base, op, { [name]: 'eleven' });
        const answer = await call(request.url, request.method, { headers: request.headers, body: request.body });
        expect([where, answer.status]).toEqual([where, 404]);
        if (where === 'examples') expect(parsed(answer)).toEqual(documented);
        else if (id === 'issueListIssueCommentAttachments') expect(answer.body).toBe('null');
        else expect(parsed(answer)).toMatchObject({ message: expect.any(String) });
      }
    });
  }

  it('the sandbox reads a sign as Go does, and 0 for anything else: +11001 finds the key, a thread "abc" is thread 0', async () => {
    expect((await at('sandbox', 'GET', '/repos/acme/rocket/keys/+11001')).status).toBe(200);
    expect((await at('sandbox', 'GET', '/repos/acme/rocket/keys/0x2AF9')).status).toBe(404);
    const thread = await at('sandbox', 'PATCH', '/notifications/threads/abc');
    expect([thread.status, parsed(thread)]).toEqual([
      404,
      expect.objectContaining({ message: 'notification does not exist [id: 0]' }),
    ]);
    const issue = await at('sandbox', 'DELETE', '/repos/acme/rocket/issues/first/assignees', json, body({}));
    expect(parsed(issue)).toMatchObject({ message: 'issue does not exist [id: 0, repo_id: 3001, index: 0]' });
  });
});

describe('paging values are never refused: the default for what cannot be read, at most 50 a page', () => {
  for (const where of ['examples', 'sandbox'] as const) {
    it(`${where}: garbage, zero and a space read as the default; 100 asks for the largest page`, async () => {
      for (const query of ['limit=ten&page=-3', 'limit=0&page=0', 'limit=%205&page=1.5', 'limit=100']) {
        const answer = await at(where, 'GET', `/admin/orgs?${query}`);
        expect([query, answer.status]).toEqual([query, 200]);
        expect((parsed(answer) as unknown[]).length).toBeGreaterThan(0);
      }
    });
  }

  it('sandbox: with 65 organizations, limit=100 answers 50 of them, and the second page the other 15', async () => {
    const first = await at('sandbox', 'GET', '/admin/orgs?limit=100');
    expect([(parsed(first) as unknown[]).length, first.headers['x-total-count']]).toEqual([50, '65']);
    expect(first.headers.link).toContain('limit=100&page=2>; rel="next"');
    const second = await at('sandbox', 'GET', '/admin/orgs?limit=100&page=2');
    expect((parsed(second) as unknown[]).length).toBe(15);
  });
});

describe('names read as the server reads them, not as the lists the document keeps for clients', () => {
  it('notifyReadThread: to-status " PINNED " pins, an unknown status reads; the examples mock answers both', async () => {
    const pinned = await at('sandbox', 'PATCH', '/notifications/threads/10001?to-status=%20PINNED%20');
    expect([pinned.status, parsed(pinned)]).toEqual([205, expect.objectContaining({ pinned: true, unread: false })]);
    const read = await at('sandbox', 'PATCH', '/notifications/threads/10001?to-status=archived');
    expect([read.status, parsed(read)]).toEqual([205, expect.objectContaining({ pinned: false, unread: false })]);
    expect((await at('examples', 'PATCH', '/notifications/threads/10001?to-status=archived')).status).toBe(205);
  });

  it('repoEditHook: events matched without regard to case, unknown names dropped, a list of unknown ones leaving none', async () => {
    const edit = (events: string[]) => at('sandbox', 'PATCH', '/repos/acme/rocket/hooks/4001', json, body({ events }));
    expect(parsed(await edit(['PUSH', 'deploy']))).toMatchObject({ events: ['push'] });
    expect(parsed(await edit(['deploy']))).toMatchObject({ events: [] });
    expect(
      (await at('examples', 'PATCH', '/repos/acme/rocket/hooks/4001', json, body({ events: ['deploy'] }))).status,
    ).toBe(200);
  });

  it('listPackageVersions: a kind of package the server does not know names no package: 404, not a refusal', async () => {
    const answer = await at('sandbox', 'GET', '/packages/acme/tarball/rocket-sdk');
    expect([answer.status, parsed(answer)]).toEqual([
      404,
      expect.objectContaining({ message: 'GetPackageByName: package does not exist' }),
    ]);
    expect((await at('examples', 'GET', '/packages/acme/tarball/rocket-sdk')).status).toBe(200);
  });
});

describe('bodies as Gitea binds them', () => {
  it('a PUT without Content-Type is 422 "Empty Content-Type", body or not; an empty JSON body is {}', async () => {
    const path = '/repos/acme/rocket/collaborators/bob';
    for (const where of ['examples', 'sandbox'] as const) {
      const bare = await at(where, 'PUT', path);
      expect([bare.status, parsed(bare)]).toEqual([
        422,
        expect.objectContaining({ message: '[]: Empty Content-Type' }),
      ]);
      expect((await at(where, 'PUT', path, json, Buffer.alloc(0))).status).toBe(204);
    }
    const empty = await at('sandbox', 'POST', '/markdown', json, Buffer.alloc(0));
    expect([empty.status, empty.body]).toEqual([200, '']);
  });

  it('a PATCH without Content-Type has its body ignored, and a DELETE without a body removes nobody', async () => {
    const label = await at('sandbox', 'PATCH', '/orgs/acme/labels/5001', {}, body({ name: 'renamed' }));
    expect([label.status, parsed(label)]).toEqual([200, expect.objectContaining({ name: 'priority/high' })]);
    const issue = await at('sandbox', 'DELETE', '/repos/acme/rocket/issues/42/assignees');
    expect(issue.status).toBe(200);
    expect((parsed(issue) as { assignees: { login: string }[] }).assignees.map((user) => user.login)).toEqual([
      'bob',
      'carol',
    ]);
  });

  it('repoCreateReleaseAttachment takes any media type but multipart as the file itself, or none, or no body at all', async () => {
    const upload = (query: string, headers: Record<string, string>, payload?: Buffer) =>
      at('sandbox', 'POST', `/repos/acme/rocket/releases/14001/assets${query}`, headers, payload);
    const png = await upload(
      '?name=logo.png',
      { 'content-type': 'image/png' },
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10]),
    );
    expect([png.status, parsed(png)]).toEqual([201, expect.objectContaining({ name: 'logo.png', size: 6 })]);
    expect(parsed(await upload('?name=notes.txt', {}, Buffer.from('raw bytes')))).toMatchObject({ size: 9 });
    expect(parsed(await upload('?name=empty.bin', {}))).toMatchObject({ name: 'empty.bin', size: 0 });
    const nameless = await upload('', { 'content-type': 'text/plain' }, Buffer.from('x'));
    expect([nameless.status, parsed(nameless)]).toEqual([
      400,
      expect.objectContaining({ message: 'Could not determine name of attachment.' }),
    ]);
    expect(
      (
        await at(
          'examples',
          'POST',
          '/repos/acme/rocket/releases/14001/assets?name=a.png',
          { 'content-type': 'image/png' },
          Buffer.from('x'),
        )
      ).status,
    ).toBe(201);
  });

  it('issueEditMilestone: a due date Go cannot decode (a space for T) is refused, as Go refuses it', async () => {
    const answer = await at(
      'examples',
      'PATCH',
      '/repos/acme/rocket/milestones/6001',
      json,
      body({ due_on: '2026-05-04 10:00:00Z' }),
    );
    expect([answer.status, parsed(answer)]).toEqual([
      422,
      expect.objectContaining({ message: expect.stringMatching(/due_on/) }),
    ]);
  });
});

describe('names and sizes the handlers check, with their status and message', () => {
  it('adminRenameUser: a user name Gitea allows, not reserved, not ending as its paths do; a change of case alone is fine', async () => {
    const rename = (name: string) =>
      at('sandbox', 'POST', '/admin/users/carol/rename', json, body({ new_username: name }));
    const refusals: [string, string][] = [
      ['-carol', 'name is invalid [-carol]: must be valid alpha or numeric or dash(-_) or dot characters'],
      ['caro..l', 'name is invalid [caro..l]: must be valid alpha or numeric or dash(-_) or dot characters'],
      ['carol_', 'name is invalid [carol_]: must be valid alpha or numeric or dash(-_) or dot characters'],
      ['caröl', 'name is invalid [caröl]: must be valid alpha or numeric or dash(-_) or dot characters'],
      ['API', 'name is reserved [name: api]'],
      ['Ghost', 'name is reserved [name: ghost]'],
      ['carol.keys', 'name pattern is not allowed [pattern: *.keys]'],
      ['carol.PNG', 'name pattern is not allowed [pattern: *.png]'],
    ];
    for (const [name, message] of refusals) {
      const answer = await rename(name);
      expect([name, answer.status, parsed(answer)]).toEqual([name, 422, expect.objectContaining({ message })]);
    }
    expect((await rename('Carol')).status).toBe(204);
    expect((await rename('carol.b-2_x')).status).toBe(204);
  });

  it('updateUserSecret: data is limited in bytes, not characters, and refused with 400 "data too long"', async () => {
    const put = (where: 'examples' | 'sandbox', data: string) =>
      at(where, 'PUT', '/user/actions/secrets/DEPLOY_TOKEN', json, body({ data }));
    expect((await put('sandbox', 'x'.repeat(65_536))).status).toBe(201);
    for (const data of ['x'.repeat(65_537), '€'.repeat(21_846)]) {
      const answer = await put('sandbox', data);
      expect([answer.status, parsed(answer)]).toEqual([400, expect.objectContaining({ message: 'data too long' })]);
      expect((await put('examples', data)).status).toBe(201);
    }
  });

  it('updateUserSecret: secret names are matched as Go folds case (ſ is an s); the name is kept in upper case', async () => {
    const put = (name: string) =>
      at('sandbox', 'PUT', `/user/actions/secrets/${encodeURIComponent(name)}`, json, body({ data: 's3cr3t' }));
    expect((await put('ſecret')).status).toBe(201);
    expect((await put('SECRET')).status).toBe(204);
    for (const name of ['ß', 'gitea_token', 'ci', '1st']) expect([name, (await put(name)).status]).toEqual([name, 400]);
  });

  it('orgEditLabel: white space around a colour is trimmed; repoEditHook: a hook address must be http or https', async () => {
    const label = await at('sandbox', 'PATCH', '/orgs/acme/labels/5001', json, body({ color: ' #ABC ' }));
    expect(parsed(label)).toMatchObject({ color: 'aabbcc' });
    const hook = await at(
      'sandbox',
      'PATCH',
      '/repos/acme/rocket/hooks/4001',
      json,
      body({ config: { url: 'ftp://ci.example.net/hook' } }),
    );
    expect([hook.status, parsed(hook)]).toEqual([422, expect.objectContaining({ message: 'Invalid url' })]);
  });
});

describe('addresses as Gitea checks them', () => {
  it("a user's address on a host without a dot, or none at all, is no violation for the proxy and live mode", () => {
    const op = listOperations(doc).find((candidate) => candidate.operation.operationId === 'orgListTeamMembers')!;
    const [member] = firstExample(doc, mediaOf(op.operation, '200')) as JsonObject[];
    const answer = (email: string) => ({
      status: 200,
      headers: new Headers({ 'content-type': 'application/json;charset=utf-8', 'x-total-count': '1' }),
      body: JSON.stringify([{ ...member, email }]),
    });
    const schemas = createSchemaValidator(doc);
    expect(mismatches(doc, schemas, op, answer('admin@localhost'))).toEqual([]);
    expect(mismatches(doc, schemas, op, answer(''))).toEqual([]);
    expect(mismatches(doc, schemas, op, answer('not an address')).map(describeViolation)).toEqual([
      'body /0/email must match format "email"',
    ]);
  });
});
