// `gitea-mock --dynamic --seed N`: answers generated from the schemas, shaped by the document's
// `x-faker` generators and constraints. For five fixed seeds every one of the 20 operations is
// called with a valid request (built from the document's examples); each answer must validate
// against the document and look like what a Gitea server sends (support/realistic.ts), and the
// same seed must give the same answers, in this process and in a `gitea-mock` started as users do.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSchemaValidator,
  deref,
  httpOperations,
  isObject,
  type Json,
  listOperations,
  loadDocument,
  type Operation,
  pointer,
  readDocumentFile,
} from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { call } from './support/call.js';
import { exampleRequest } from './support/http.js';
import { launch, type Launched } from './support/launch.js';
import { CHECKS, checkRealistic, type Check } from './support/realistic.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const SEEDS = ['1', '7', '42', '2024', 'gitea'];
console.log(`dynamic data: seeds ${SEEDS.join(', ')}`);

const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const schemas = createSchemaValidator(doc);
const operations = listOperations(doc).map((op) => [String(op.operation.operationId), op] as const);

interface Answered {
  status: number;
  body: string;
}

/** The success status of an operation, and the pointer of its JSON schema when it answers JSON. */
function successOf(op: Operation): { status: number; schema?: string } {
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const status = Math.min(
    ...Object.keys(responses)
      .map(Number)
      .filter((code) => code < 300),
  );
  const { value, location } = deref(doc, responses[String(status)], `${op.location}/responses/${status}`);
  const content = isObject(value) && isObject(value.content) ? value.content : {};
  return {
    status,
    ...(content['application/json']
      ? { schema: `${location}/content/${pointer(['application/json']).slice(1)}/schema` }
      : {}),
  };
}

/** Every operation once, in the document's order; node:http, as fetch drops the body of notifyReadThread's 205. */
async function answerAll(baseUrl: string): Promise<Map<string, Answered>> {
  const answers = new Map<string, Answered>();
  for (const [id, op] of operations) {
    const req = await exampleRequest(doc, baseUrl, op);
    const { status, body } = await call(req.url, req.method, { headers: req.headers, body: req.body });
    answers.set(id, { status, body });
  }
  return answers;
}

/** Every `x-faker` of the document with where it is: json-schema-faker falls back to lorem ipsum, silently, for a method faker lacks. */
function fakerCalls(node: Json | undefined, at = ''): { at: string; method: string; args: Json[] }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => fakerCalls(item, `${at}/${i}`));
  if (!isObject(node)) return [];
  return Object.entries(node).flatMap(([key, value]) => {
    if (key !== 'x-faker') return fakerCalls(value, `${at}/${key}`);
    if (typeof value === 'string') return [{ at, method: value, args: [] }];
    return Object.entries(isObject(value) ? value : {}).map(([method, args]) => ({
      at,
      method,
      args: Array.isArray(args) ? args : [args],
    }));
  });
}

/** Path parameters unlike any example's, so an answer agrees with them only by reading the path. */
const NAMED = {
  owner: 'zed',
  repo: 'orbit-2',
  index: '77',
  id: '4242',
  org: 'zed-labs',
  workflow_id: 'nightly.yaml',
  name: 'orbit-sdk',
};
const WEB = 'https://gitea.example.org';
const API = `${WEB}/api/v1`;
/** Per operation, what its answer to those parameters must hold, each at a JSON pointer. */
const AGREEMENT: Record<string, Record<string, unknown>> = {
  issueRemoveAssignees: {
    '/number': 77,
    '/url': `${API}/repos/zed/orbit-2/issues/77`,
    '/html_url': `${WEB}/zed/orbit-2/issues/77`,
    '/repository/owner': 'zed',
    '/repository/name': 'orbit-2',
    '/repository/full_name': 'zed/orbit-2',
  },
  repoEditPullRequest: {
    '/number': 77,
    '/url': `${WEB}/zed/orbit-2/pulls/77`,
    '/html_url': `${WEB}/zed/orbit-2/pulls/77`,
    '/diff_url': `${WEB}/zed/orbit-2/pulls/77.diff`,
    '/patch_url': `${WEB}/zed/orbit-2/pulls/77.patch`,
    '/base/repo/owner/login': 'zed',
    '/base/repo/full_name': 'zed/orbit-2',
    '/base/repo/url': `${API}/repos/zed/orbit-2`,
  },
  repoGetKey: {
    '/id': 4242,
    '/url': `${API}/repos/zed/orbit-2/keys/4242`,
    '/repository/full_name': 'zed/orbit-2',
    '/repository/owner/login': 'zed',
  },
  repoEditHook: { '/id': 4242 },
  issueEditMilestone: { '/id': 4242 },
  ActionsGetWorkflow: {
    '/id': 'nightly.yaml',
    '/path': '.gitea/workflows/nightly.yaml',
    '/url': `${API}/repos/zed/orbit-2/actions/workflows/nightly.yaml`,
    '/html_url': `${WEB}/zed/orbit-2/src/branch/main/.gitea/workflows/nightly.yaml`,
    '/badge_url': `${WEB}/zed/orbit-2/actions/workflows/nightly.yaml/badge.svg?branch=main`,
  },
  orgEditLabel: { '/id': 4242, '/url': `${API}/orgs/zed-labs/labels/4242` },
  notifyReadThread: { '/id': 4242, '/url': `${API}/notifications/threads/4242` },
  listPackageVersions: { '/0/owner/login': 'zed', '/0/owner/username': 'zed', '/0/name': 'orbit-sdk' },
};
/** How often each expectation found its field in an answer, over every seed. */
const agreed = new Map<string, number>();

/** The value at a JSON pointer (no escapes needed here), or undefined. */
function at(value: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      value,
    );
}

const hits = new Map<Check, number>();
const bySeed = new Map<string, Map<string, Answered>>();

// The built bin, for the first seed, starts while the in-process mocks answer: it is another process.
let cli: Promise<Launched>;
beforeAll(() => {
  cli = launch(process.execPath, [CLI, '--port', '0', '--quiet', '--dynamic', '--seed', SEEDS[0]!]);
  cli.catch(() => {}); // its test reports the failure
});
afterAll(async () => {
  await (await cli.catch(() => undefined))?.stop();
});

for (const seed of SEEDS)
  describe(`gitea-mock --dynamic --seed ${seed}`, () => {
    let mock: MockServer;
    const warnings: string[] = [];
    let answers: Map<string, Answered>;
    beforeAll(async () => {
      mock = await startMockServer({
        port: 0,
        host: '127.0.0.1',
        dynamic: true,
        seed,
        onWarning: (line) => warnings.push(line),
      });
      answers = await answerAll(mock.baseUrl);
      bySeed.set(seed, answers);
    });
    afterAll(async () => {
      await mock?.close();
    });

    it.each(operations)('%s answers data that validates against the document and looks like Gitea data', (id, op) => {
      const { status, schema } = successOf(op);
      const answer = answers.get(id)!;
      expect(answer.status, id).toBe(status);
      if (schema === undefined) return;
      const body = JSON.parse(answer.body) as unknown;
      expect(schemas.check(schema, body), `${id} against the document`).toEqual([]);
      expect(checkRealistic(body, hits), `${id}: fields that do not look like Gitea's`).toEqual([]);
    });

    // Once is enough: each answer is generated afresh from the seed.
    if (seed === SEEDS[0]) {
      it('answers the same again for the same seed', async () => {
        expect(await answerAll(mock.baseUrl)).toEqual(answers);
      });
    }

    it('answers what the request path names: its ids, its repository, and the addresses built on them', async () => {
      const problems: string[] = [];
      for (const [id, op] of operations) {
        const expected = AGREEMENT[id];
        if (!expected) continue;
        const req = await exampleRequest(doc, mock.baseUrl, op, NAMED);
        const { status, body } = await call(req.url, req.method, { headers: req.headers, body: req.body });
        expect(status, id).toBeLessThan(300);
        const answer = JSON.parse(body) as unknown;
        // Fields the generator left out cannot disagree; every expectation must meet its field under some seed (below).
        for (const [pointer, value] of Object.entries(expected)) {
          const actual = at(answer, pointer);
          if (actual === undefined) continue;
          agreed.set(`${id} ${pointer}`, (agreed.get(`${id} ${pointer}`) ?? 0) + 1);
          if (actual !== value)
            problems.push(
              `${id} ${pointer}: ${JSON.stringify(actual)}, where the path makes it ${JSON.stringify(value)}`,
            );
        }
        expect(schemas.check(successOf(op).schema!, answer), `${id} against the document`).toEqual([]);
        expect(checkRealistic(answer, hits), `${id}: fields that do not look like Gitea's`).toEqual([]);
      }
      // The milestone's path takes its title too, when no milestone has that id.
      const [, milestone] = operations.find(([id]) => id === 'issueEditMilestone')!;
      const req = await exampleRequest(doc, mock.baseUrl, milestone, { ...NAMED, id: 'v2.0 launch' });
      const answer = JSON.parse(
        (await call(req.url, req.method, { headers: req.headers, body: req.body })).body,
      ) as unknown;
      expect(answer).toHaveProperty('title', 'v2.0 launch');
      expect(problems).toEqual([]);
    });

    it('warned of no answer that broke the document', () => {
      expect(warnings).toEqual([]);
    });
  });

describe('gitea-mock --dynamic across seeds', () => {
  it('every x-faker of the document names a method of the faker Prism uses', () => {
    const fromPrism = createRequire(createRequire(import.meta.url).resolve('@stoplight/prism-http'));
    const faker = fromPrism('@faker-js/faker/locale/en') as Record<string, Record<string, unknown>>;
    const exists = (method: string): boolean => {
      const [module, name, ...rest] = method.split('.');
      return (
        rest.length === 0 &&
        (name === undefined ? typeof faker[module!] === 'function' : typeof faker[module!]?.[name] === 'function')
      );
    };
    const calls = fakerCalls(doc);
    expect(calls.length).toBeGreaterThan(100);
    const missing = calls.flatMap(({ at, method, args }) => {
      // `fake` fills in a template's `{{module.method}}` and `{{module.method(arguments)}}`.
      const inner = method === 'fake' ? [...String(args[0]).matchAll(/\{\{([\w.]+)/g)].map((m) => m[1]!) : [];
      return [method, ...inner].filter((name) => !exists(name)).map((name) => `${at}: ${name}`);
    });
    expect(missing).toEqual([]);
  });

  it('ran every kind of field check on the answers', () => {
    expect(
      CHECKS.filter((kind) => !hits.get(kind)),
      'checks no answer exercised',
    ).toEqual([]);
  });

  it('met every field the path decides in some answer', () => {
    const expectations = Object.entries(AGREEMENT).flatMap(([id, fields]) =>
      Object.keys(fields).map((pointer) => `${id} ${pointer}`),
    );
    expect(expectations.filter((key) => !agreed.get(key))).toEqual([]);
  });

  it('sends null where Gitea does: every GPG subkey without its lists, and under some seed a head whose fork is gone', async () => {
    const answers = SEEDS.map((seed) => bySeed.get(seed)!);
    type Key = { emails: unknown; subkeys: { emails: unknown; subkeys: unknown; verified: boolean }[] | null };
    const keys = answers.map((byId) => JSON.parse(byId.get('userCurrentPostGPGKey')!.body) as Key);
    // Subkeys are rarer than the five seeds: a dozen more seeds, each a mock of its own, answer a key.
    const [, addKey] = operations.find(([id]) => id === 'userCurrentPostGPGKey')!;
    for (let n = 1; n <= 12; n++) {
      const mock = await startMockServer({ port: 0, dynamic: true, seed: `subkeys-${n}` });
      const req = await exampleRequest(doc, mock.baseUrl, addKey);
      keys.push(JSON.parse((await call(req.url, req.method, { headers: req.headers, body: req.body })).body) as Key);
      await mock.close();
    }
    for (const key of keys) {
      expect(Array.isArray(key.emails) && Array.isArray(key.subkeys)).toBe(true);
      for (const subkey of key.subkeys!)
        expect([subkey.emails, subkey.subkeys, subkey.verified]).toEqual([null, null, false]);
    }
    expect(
      keys.some((key) => key.subkeys!.length > 0),
      'a subkey under some seed',
    ).toBe(true);
    const pulls = answers.map(
      (byId) =>
        JSON.parse(byId.get('repoEditPullRequest')!.body) as {
          head: { repo: unknown; repo_id: number; ref: string };
          additions?: number;
        },
    );
    const gone = pulls.filter((pull) => pull.head.repo === null);
    expect(gone.length, 'a deleted head fork under some seed').toBeGreaterThan(0);
    for (const pull of gone)
      expect([pull.head.repo_id, pull.head.ref, pull.additions]).toEqual([-1, 'refs/pull/43/head', undefined]);
    // What did not happen keeps Gitea's "never set" values.
    for (const byId of answers) {
      const repo = JSON.parse(byId.get('repoMigrate')!.body) as {
        archived: boolean;
        archived_at: string;
        mirror: boolean;
        mirror_updated: string;
      };
      if (!repo.archived) expect(repo.archived_at).toBe('1970-01-01T00:00:00Z');
      if (!repo.mirror) expect(repo.mirror_updated).toBe('0001-01-01T00:00:00Z');
      const pull = JSON.parse(byId.get('repoEditPullRequest')!.body) as {
        merged: boolean;
        merged_at: unknown;
        state: string;
        closed_at: unknown;
      };
      if (!pull.merged) expect(pull.merged_at).toBeNull();
      if (pull.state === 'open') expect(pull.closed_at).toBeNull();
    }
  });

  // The table made afresh, as the build makes it.
  it('leaves the operation table as the document makes it: generating an answer changes no schema of it', () => {
    // json-schema-faker resolves a schema's references where they stand: given the table's own
    // operation, it would turn a repository's `parent` into `{}` for every later answer and check.
    const { operations: table } = readDocumentFile(fileURLToPath(new URL('../openapi.yaml', import.meta.url)));
    expect(JSON.stringify(table)).toBe(
      JSON.stringify(httpOperations(loadDocument(new URL('../openapi.yaml', import.meta.url)))),
    );
  });

  it('answers differently for another seed', () => {
    const [first, second] = SEEDS.map((seed) => bySeed.get(seed)!);
    expect(first!.get('repoGetKey')!.body).not.toBe(second!.get('repoGetKey')!.body);
  });

  it(`the built gitea-mock answers the same for the same seed (${SEEDS[0]})`, async () => {
    const mock = await cli;
    expect(mock.output()).toContain(`(dynamic data, seed ${SEEDS[0]})`);
    expect(await answerAll(mock.baseUrl)).toEqual(bySeed.get(SEEDS[0]!));
  });
});
