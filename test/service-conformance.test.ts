// Checks openapi.yaml against what a real Gitea sends and accepts, as read from its source and
// written down in test/service-facts.json: every status an operation answers with every kind of
// body, every declared status accounted for, the fields the server can send as null (and those
// it never does), the odd values it sends, request bodies as clients send them (every field left
// unset as null, or as the Go zero value of Gitea's own structs), the values the server refuses
// nowhere (`x-lenient`), and the requests that stop it. Each test collects all its problems, so a
// failure lists them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  createSchemaValidator,
  deref,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  listWebhooks,
  type Operation,
  operationParameters,
  pointer,
  resolvePointer,
  tryLoadDocument,
} from './support/mock-internals.js';

interface OperationFacts {
  operationId: string;
  statuses: Record<string, string[]>;
  mockOnly?: string[];
}
interface RequestFacts {
  required: Record<string, Json>;
  null: Record<string, string>;
  zero: Record<string, Json>;
}
interface CrashFacts {
  body: Json;
  why: string;
  warning: string;
}
interface FieldFacts {
  null: boolean;
  values?: Json[];
}
interface WebhookFacts {
  event: string;
  payload: string;
  actions: Record<string, string>;
}
interface ServiceFacts {
  everyOperation: Record<string, string[]>;
  webhooks: Record<string, WebhookFacts>;
  operations: Record<string, OperationFacts>;
  requests: Record<string, RequestFacts>;
  lenient: Record<string, Record<string, string>>;
  requiredBodies: string[];
  seedWins: { operation: string; status: string; body: Json; why: string; mention: string }[];
  crashes: Record<string, CrashFacts[]>;
  records: Record<string, Record<string, FieldFacts>>;
}

const facts = JSON.parse(readFileSync(new URL('./service-facts.json', import.meta.url), 'utf8')) as ServiceFacts;
const loaded = tryLoadDocument(new URL('../openapi.yaml', import.meta.url));
const doc = loaded.doc;
const schemas = createSchemaValidator(doc);
const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));

const DOCS = 'https://gitea.example.org/api/swagger';
/** One body of each JSON kind, as the server writes it. */
const SAMPLES: Record<string, Json[]> = {
  APIError: [
    { message: 'user should be the site admin', url: DOCS },
    { message: '', url: DOCS },
  ],
  APIErrorNoUrl: [{ message: 'Only administrators allowed to sudo.' }],
  NotFound: [
    { errors: null, message: 'not found', url: DOCS },
    { errors: ['user redirect does not exist [name: dave]'], message: 'GetUserByName', url: DOCS },
    { message: 'not found', url: DOCS },
  ],
  null: [null],
};

const show = (value: unknown): string => JSON.stringify(value) ?? 'undefined';
const media = (location: string, type: string): string => `${location}/content/${pointer([type]).slice(1)}/schema`;

/** The record a JSON schema stands for: `X` for a `$ref`, `X[]` for an array of them, oneOf members included. */
function recordsOf(schema: Json | undefined): string[] {
  if (!isObject(schema)) return [];
  if (typeof schema.$ref === 'string') return [schema.$ref.replace('#/components/schemas/', '')];
  if (schema.type === 'array') return recordsOf(schema.items).map((name) => `${name}[]`);
  return (Array.isArray(schema.oneOf) ? schema.oneOf : []).flatMap(recordsOf);
}

/** The problems of one kind of body against the response declared for its status. */
function kindProblems(label: string, response: JsonObject, location: string, kind: string): string[] {
  const content = isObject(response.content) ? response.content : {};
  if (kind === 'empty') {
    return Object.keys(content).length === 0 || response['x-body-optional'] === true
      ? []
      : [`${label}: the server sends no body, but the response declares one and lacks x-body-optional: true`];
  }
  if (kind === 'redirect') {
    const header = isObject(response.headers) ? deref(doc, response.headers.Location, '').value : undefined;
    return isObject(header) && header.required === true
      ? []
      : [`${label}: a redirect, but no required Location header is declared`];
  }
  if (kind === 'html')
    return isObject(content['text/html']) ? [] : [`${label}: the server sends text/html, which is not declared`];
  if (kind.startsWith('text:')) {
    const text = kind.slice('text:'.length);
    if (!isObject(content['text/plain']))
      return [`${label}: the server sends text/plain ${show(text)}, which is not declared`];
    return schemas
      .check(media(location, 'text/plain'), text)
      .map((problem) => `${label}: text ${show(text)}: ${problem}`);
  }
  if (!isObject(content['application/json']))
    return [`${label}: the server sends JSON (${kind}), which is not declared`];
  const at = media(location, 'application/json');
  if (kind.startsWith('json:')) {
    const want = kind.slice('json:'.length);
    const have = recordsOf(resolvePointer(doc, `#${at}`));
    return have.includes(want) ? [] : [`${label}: the body is ${want}, the document says ${show(have)}`];
  }
  const samples = SAMPLES[kind];
  if (!samples) return [`${label}: the facts name an unknown kind of body ${show(kind)}`];
  return samples.flatMap((sample) =>
    schemas.check(at, sample).map((problem) => `${label}: ${kind} ${show(sample)}: ${problem}`),
  );
}

function statusProblems(id: string, spec: OperationFacts, op: Operation): string[] {
  const problems: string[] = [];
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const sent = new Map<string, string[]>();
  for (const [status, kinds] of [...Object.entries(facts.everyOperation), ...Object.entries(spec.statuses)])
    sent.set(status, [...(sent.get(status) ?? []), ...kinds]);
  const accounted = new Set([...sent.keys(), ...(spec.mockOnly ?? [])]);
  for (const status of Object.keys(responses)) {
    if (!accounted.has(status))
      problems.push(
        `${id} ${status}: declared, but the server never sends it and the facts do not list it as mock-only`,
      );
  }
  for (const status of spec.mockOnly ?? []) {
    if (!Object.hasOwn(responses, status)) problems.push(`${id} ${status}: listed as mock-only, but not declared`);
  }
  for (const [status, kinds] of sent) {
    if (!Object.hasOwn(responses, status)) {
      problems.push(`${id} ${status}: the server sends it, the document does not declare it`);
      continue;
    }
    const { value, location } = deref(doc, responses[status], `${op.location}/responses/${status}`);
    for (const kind of new Set(kinds))
      problems.push(...kindProblems(`${id} ${status}`, isObject(value) ? value : {}, location, kind));
  }
  return problems;
}

/** JSON request bodies by schema name, with where their media schema is. */
function requestBodies(): { operationId: string; schema: string; at: string }[] {
  const bodies: { operationId: string; schema: string; at: string }[] = [];
  for (const [operationId, op] of operations) {
    const { value, location } = deref(doc, op.operation.requestBody, `${op.location}/requestBody`);
    const content = isObject(value) && isObject(value.content) ? value.content : {};
    const json = content['application/json'];
    if (!isObject(json) || !isObject(json.schema) || typeof json.schema.$ref !== 'string') continue;
    bodies.push({
      operationId,
      schema: json.schema.$ref.replace('#/components/schemas/', ''),
      at: media(location, 'application/json'),
    });
  }
  return bodies;
}

function requestProblems(operationId: string, name: string, at: string): string[] {
  const spec = facts.requests[name];
  if (!spec) return [`${name} (${operationId}): no facts for this request body`];
  const schema = resolvePointer(doc, `#/components/schemas/${name}`);
  const properties = isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
  const required = isObject(schema) && Array.isArray(schema.required) ? schema.required.map(String) : [];
  const problems: string[] = [];
  const wantRequired = Object.keys(spec.required);
  if (show([...required].sort()) !== show([...wantRequired].sort()))
    problems.push(`${name}: required is ${show(required)}, the server requires ${show(wantRequired)}`);
  const optional = properties.filter((property) => !wantRequired.includes(property));
  if (show([...optional].sort()) !== show(Object.keys(spec.null).sort())) {
    problems.push(
      `${name}: the facts say what null means for ${show(Object.keys(spec.null).sort())}, the schema's optional fields are ${show(optional.sort())}`,
    );
  }
  const base = `/components/schemas/${name}/properties`;
  for (const property of optional) {
    for (const problem of schemas.check(`${base}/${pointer([property]).slice(1)}`, null))
      problems.push(`${name}.${property}: null (${spec.null[property] ?? '?'}) is refused: ${problem}`);
  }
  for (const property of wantRequired) {
    if (schemas.check(`${base}/${pointer([property]).slice(1)}`, null).length === 0)
      problems.push(`${name}.${property}: null is accepted, but the server refuses it (422)`);
  }
  for (const [property, value] of Object.entries(spec.zero)) {
    if (!optional.includes(property)) {
      problems.push(`${name}.${property}: a Go zero value is listed, but it is no optional field of the schema`);
      continue;
    }
    for (const problem of schemas.check(`${base}/${pointer([property]).slice(1)}`, value))
      problems.push(`${name}.${property}: ${show(value)}, Go's zero value, is refused: ${problem}`);
  }
  // The bodies clients send: the required fields set, every other field null, or its Go zero value.
  const sentFor = (property: string, zero: boolean): Json => {
    if (Object.hasOwn(spec.required, property)) return spec.required[property]!;
    return zero && Object.hasOwn(spec.zero, property) ? spec.zero[property]! : null;
  };
  for (const [client, zero] of [
    ['a client of pointers', false],
    ["a Go client of Gitea's structs", true],
  ] as const) {
    const body = Object.fromEntries(properties.map((property) => [property, sentFor(property, zero)]));
    for (const problem of schemas.check(at, body))
      problems.push(`${name} as ${client} sends it (${operationId}): ${problem}`);
  }
  return problems;
}

/** Whether a schema (or the reference to one, with its siblings) carries `x-lenient: true`. */
function lenient(schema: Json | undefined): boolean {
  if (!isObject(schema)) return false;
  return (
    schema['x-lenient'] === true ||
    lenient(deref(doc, schema, '').refs.length > 0 ? deref(doc, schema, '').value : undefined)
  );
}

/** Every place of an operation's request marked `x-lenient`: `path.id`, `query.page`, `body.events[]`. */
function lenientPlaces(op: Operation): string[] {
  const places = operationParameters(doc, op)
    .filter(({ param }) => lenient(param.schema))
    .map(({ param }) => `${String(param.in)}.${String(param.name)}`);
  const visit = (schema: Json | undefined, at: string, seen: Set<Json>): void => {
    const node = deref(doc, schema, '').value;
    if (!isObject(node) || seen.has(node)) return;
    seen.add(node);
    if (lenient(schema)) places.push(at);
    for (const [property, value] of Object.entries(isObject(node.properties) ? node.properties : {}))
      visit(value, `${at}.${property}`, seen);
    if (node.items !== undefined) visit(node.items, `${at}[]`, seen);
  };
  const body = deref(doc, op.operation.requestBody, '').value;
  const content = isObject(body) && isObject(body.content) ? body.content : {};
  for (const media of Object.values(content)) if (isObject(media)) visit(media.schema, 'body', new Set());
  return [...new Set(places)].sort();
}

function recordProblems(name: string, fields: Record<string, FieldFacts>): string[] {
  const schema = resolvePointer(doc, `#/components/schemas/${name}`);
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const problems: string[] = [];
  for (const [field, spec] of Object.entries(fields)) {
    if (!Object.hasOwn(properties, field)) {
      problems.push(`${name}.${field}: no such property`);
      continue;
    }
    const at = `/components/schemas/${name}/properties/${pointer([field]).slice(1)}`;
    const takesNull = schemas.check(at, null).length === 0;
    if (spec.null && !takesNull) problems.push(`${name}.${field}: the server sends null, the schema refuses it`);
    if (!spec.null && takesNull) problems.push(`${name}.${field}: typed nullable, but the server never sends null`);
    for (const value of spec.values ?? []) {
      for (const problem of schemas.check(at, value))
        problems.push(`${name}.${field}: the server sends ${show(value)}, which the schema refuses: ${problem}`);
    }
  }
  return problems;
}

/** How the webhook of `type` departs from the facts: its X-Gitea-Event, its payload, its actions. */
function webhookProblems(type: string, spec: WebhookFacts): string[] {
  const webhook = listWebhooks(doc).find((candidate) => candidate.path === type);
  if (!webhook) return [`${type}: no such webhook`];
  const problems: string[] = [];
  const header = (name: string): Json | undefined => {
    const param = operationParameters(doc, webhook).find(({ param }) => param.name === name)?.param;
    return isObject(param) && isObject(param.schema) ? param.schema.const : undefined;
  };
  for (const [name, want] of [
    ['X-Gitea-Event', spec.event],
    ['X-Gitea-Event-Type', type],
  ])
    if (header(name!) !== want)
      problems.push(`${type}: ${name} is ${show(header(name!))}, the server sends ${show(want)}`);
  const json = resolvePointer(doc, `#${webhook.location}/requestBody/content/application~1json/schema`);
  // A payload with actions is `allOf` the payload and the webhook's actions; one without is the payload itself.
  const parts = isObject(json) ? (Array.isArray(json.allOf) ? json.allOf : [json]) : [];
  const payload = parts.flatMap((part) => (isObject(part) && typeof part.$ref === 'string' ? [part.$ref] : []));
  if (show(payload) !== show([`#/components/schemas/${spec.payload}`]))
    problems.push(`${type}: the payload is ${show(payload)}, the server sends ${spec.payload}`);
  const actions = parts.flatMap((part) => {
    const action = isObject(part) && isObject(part.properties) ? part.properties.action : undefined;
    return isObject(action) && Array.isArray(action.enum) ? action.enum : [];
  });
  if (show([...actions].sort()) !== show(Object.keys(spec.actions).sort()))
    problems.push(`${type}: the actions are ${show(actions)}, the operations send ${show(Object.keys(spec.actions))}`);
  return problems;
}

/** A document that failed to load is the one problem worth reading. */
function report(list: string[]): string[] {
  return loaded.error !== undefined ? [`openapi.yaml could not be loaded: ${loaded.error}`] : list;
}

describe('openapi.yaml says what a real Gitea sends and accepts (test/service-facts.json)', () => {
  it('has facts for each of the 20 operations, and only for those', () => {
    expect(
      Object.values(facts.operations)
        .map((spec) => spec.operationId)
        .sort(),
    ).toEqual([...operations.keys()].sort());
  });

  for (const [id, spec] of Object.entries(facts.operations)) {
    it(`${id} ${spec.operationId}: every status with every kind of body it has`, () => {
      const op = operations.get(spec.operationId);
      expect(op, `${spec.operationId} is not in openapi.yaml`).toBeDefined();
      expect(report(statusProblems(id, spec, op!))).toEqual([]);
    });
  }

  for (const { operationId, schema, at } of requestBodies()) {
    it(`${schema} (${operationId}) takes what the server takes: null or Go's zero value for every optional field, as clients send them`, () => {
      expect(report(requestProblems(operationId, schema, at))).toEqual([]);
    });
  }

  it('has request facts only for request bodies of the document', () => {
    expect(Object.keys(facts.requests).sort()).toEqual(
      requestBodies()
        .map((body) => body.schema)
        .sort(),
    );
  });

  for (const [id, spec] of Object.entries(facts.operations)) {
    it(`${id} ${spec.operationId}: x-lenient exactly where the server refuses no value`, () => {
      const op = operations.get(spec.operationId)!;
      expect(report(lenientPlaces(op))).toEqual(Object.keys(facts.lenient[id] ?? {}).sort());
    });
  }

  it('marks the request body required exactly where the server refuses a request without one', () => {
    const required = Object.entries(facts.operations)
      .filter(([, spec]) => {
        const body = deref(doc, operations.get(spec.operationId)?.operation.requestBody, '').value;
        return isObject(body) && body.required === true;
      })
      .map(([id]) => id);
    expect(report(required)).toEqual(facts.requiredBodies);
  });

  for (const { operation: id, status, body, why, mention } of facts.seedWins) {
    it(`${id} ${status}: refuses ${show(body)}, which the server sends (${why}), and says so`, () => {
      const op = operations.get(facts.operations[id]!.operationId)!;
      const { location } = deref(
        doc,
        (op.operation.responses as JsonObject)[status],
        `${op.location}/responses/${status}`,
      );
      const problems = [
        ...(schemas.check(media(location, 'application/json'), body).length > 0
          ? []
          : [`${id} ${status}: the document takes ${show(body)}; remove it from seedWins`]),
        ...(String(op.operation.description).includes(mention)
          ? []
          : [`${id}: the description does not name ${show(mention)}`]),
      ];
      expect(report(problems)).toEqual([]);
    });
  }

  for (const [id, crashes] of Object.entries(facts.crashes)) {
    it(`${id}: the description warns of each request that stops the server, which the document takes`, () => {
      const op = operations.get(facts.operations[id]!.operationId)!;
      const problems = crashes.flatMap((crash) => {
        const description = String(op.operation.description ?? '');
        const body = deref(doc, op.operation.requestBody, `${op.location}/requestBody`);
        const warned = description.includes(crash.warning)
          ? []
          : [`${id}: the description does not warn (${show(crash.warning)}) of ${show(crash.body)}: ${crash.why}`];
        const taken = schemas.check(media(body.location, 'application/json'), crash.body);
        return [...warned, ...taken.map((problem) => `${id}: the document refuses the crashing body: ${problem}`)];
      });
      expect(report(problems)).toEqual([]);
    });
  }

  it('has facts for each webhook of the document, and only for those', () => {
    expect(Object.keys(facts.webhooks).sort()).toEqual(
      listWebhooks(doc)
        .map((webhook) => webhook.path)
        .sort(),
    );
  });

  for (const [type, spec] of Object.entries(facts.webhooks)) {
    it(`webhook ${type}: its event, payload and the actions the operations send`, () => {
      expect(report(webhookProblems(type, spec))).toEqual([]);
    });
  }

  for (const [name, fields] of Object.entries(facts.records)) {
    it(`record ${name}: null where the server sends it, and only there; the values it sends`, () => {
      expect(report(recordProblems(name, fields))).toEqual([]);
    });
  }
});
