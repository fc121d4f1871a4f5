// `gitea-mock --dynamic --seed N`: answers generated from the schemas, shaped by the document's
// `x-faker` generators and constraints. For five fixed seeds every one of the 20 operations is
// called with a valid request (built from the document's examples); each answer must validate
// against the document and look like what a Gitea server sends (support/realistic.ts), and the
// same seed must give the same answers, in this process and in a `gitea-mock` started as users do.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deref, isObject, listOperations, loadDocument, pointer, type Json, type Operation } from '../test/support/document.js';
import { createSchemaValidator } from '../test/support/schema.js';
import { startMockServer, type MockServer } from '../scripts/mock/server.js';
import { exampleRequest, send } from './support/http.js';
import { launch, type Launched } from './support/launch.js';
import { CHECKS, checkRealistic, type Check } from './support/realistic.js';

const CLI = fileURLToPath(new URL('../dist/mock/cli.mjs', import.meta.url));
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
  const status = Math.min(...Object.keys(responses).map(Number).filter((code) => code < 300));
  const { value, location } = deref(doc, responses[String(status)], `${op.location}/responses/${status}`);
  const content = isObject(value) && isObject(value.content) ? value.content : {};
  return { status, ...(content['application/json'] ? { schema: `${location}/content/${pointer(['application/json']).slice(1)}/schema` } : {}) };
}

/** Every operation once, in the document's order; node:http, as fetch drops the body of E8's 205. */
async function answerAll(baseUrl: string): Promise<Map<string, Answered>> {
  const answers = new Map<string, Answered>();
  for (const [id, op] of operations) {
    const req = await exampleRequest(doc, baseUrl, op);
    const { status, body } = await send(req.url, req.method, req.headers, req.body);
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
    return Object.entries(isObject(value) ? value : {}).map(([method, args]) => ({ at, method, args: Array.isArray(args) ? args : [args] }));
  });
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

for (const seed of SEEDS) describe(`gitea-mock --dynamic --seed ${seed}`, () => {
  let mock: MockServer;
  const warnings: string[] = [];
  let answers: Map<string, Answered>;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, host: '127.0.0.1', dynamic: true, seed, onWarning: (line) => warnings.push(line) });
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
      return rest.length === 0 && (name === undefined ? typeof faker[module!] === 'function' : typeof faker[module!]?.[name] === 'function');
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
    expect(CHECKS.filter((kind) => !hits.get(kind)), 'checks no answer exercised').toEqual([]);
  });

  it('answers differently for another seed', () => {
    const [first, second] = SEEDS.map((seed) => bySeed.get(seed)!);
    expect(first!.get('repoGetKey')!.body).not.toBe(second!.get('repoGetKey')!.body);
  });

  it(`the built gitea-mock answers the same for the same seed (${SEEDS[0]})`, async () => {
    const mock = await cli;
    expect(await answerAll(mock.baseUrl)).toEqual(bySeed.get(SEEDS[0]!));
  });
});
