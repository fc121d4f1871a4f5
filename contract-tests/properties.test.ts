// Property-based contract: requests generated from each operation's own schemas (parameters and
// body, read from openapi.yaml) must be accepted with a 2xx; the same requests with one
// constraint broken must be refused with a 4xx and the service's error body. Seeded: set
// FC_SEED to replay; fast-check prints the seed and path of any failure.
import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import { createGiteaClient, type GiteaClient } from '../src/index.js';
import {
  deref,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  operationParameters,
} from '../test/support/mock-internals.js';
import { arbitraryFor, isLenient, mutationsFor, type Mutation } from './support/arbitraries.js';
import { doc } from './support/coverage.js';

const SEED = Number(process.env.FC_SEED ?? 20261122);
/** Requests per property: 30 in `npm test`; FC_RUNS=500 (say) for a deeper run. */
const RUNS = Number(process.env.FC_RUNS ?? 30);

interface Parts {
  path: JsonObject;
  query: JsonObject;
  body?: Json;
}

type Send = (path: string, init: Record<string, unknown>) => Promise<{ response: Response; error?: unknown }>;

/** The parameters of one location as an object schema, so the same generator and mutations serve. */
function parameterSchema(op: ReturnType<typeof listOperations>[number], where: 'path' | 'query'): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const { param } of operationParameters(doc, op)) {
    if (param.in !== where) continue;
    const schema = param.schema as JsonObject;
    // A path segment may be any string but one that URL parsing rewrites (the client refuses those).
    properties[String(param.name)] =
      where === 'path' && schema.type === 'string' ? { ...schema, minLength: 1, not: { enum: ['.', '..'] } } : schema;
    if (param.required) required.push(String(param.name));
  }
  return { type: 'object', properties, required };
}

/**
 * Only breaks a query string or path can carry: numbers that are not numbers, values outside an
 * enum or range. A lenient parameter takes any text, as the server does.
 */
function parameterMutations(schema: JsonObject, where: 'path' | 'query'): Mutation[] {
  const properties = schema.properties as JsonObject;
  const field = (m: Mutation): JsonObject => properties[m.what.split(' ')[0]!] as JsonObject;
  return mutationsFor(doc, schema)
    .filter((m) => !m.what.endsWith('missing') && m.what !== 'an unknown field')
    .filter((m) => !m.what.endsWith('of the wrong type') || field(m).type === 'integer')
    .filter((m) => !isLenient(doc, field(m)))
    .map((m) => ({ what: `${where} ${m.what}`, apply: m.apply }));
}

function send(
  client: GiteaClient,
  method: string,
  path: string,
  parts: Parts,
  mediaType: string | undefined,
): ReturnType<Send> {
  const init: Record<string, unknown> = { params: { path: parts.path, query: parts.query } };
  if (mediaType === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, value] of Object.entries((parts.body ?? {}) as JsonObject))
      form.append(name, new Blob([String(value)]), `${name}.bin`);
    init.body = form;
    init.bodySerializer = (body: unknown) => body;
  } else if (parts.body !== undefined) {
    init.body = parts.body;
  }
  if (mediaType === undefined && method === 'POST') init.parseAs = 'text';
  if (path === '/markdown') init.parseAs = 'text';
  return ((client as unknown as Record<string, Send>)[method] as Send)(path, init);
}

describe('property-based: generated requests against the mock', () => {
  const client = createGiteaClient({
    baseUrl: inject('mockBaseUrl'),
    auth: { token: 'property-test-token' },
    retry: 0,
  });

  for (const op of listOperations(doc)) {
    const id = String(op.operation.operationId);
    const method = op.method.toUpperCase();
    const pathSchema = parameterSchema(op, 'path');
    const querySchema = parameterSchema(op, 'query');
    const requestBody = deref(doc, op.operation.requestBody, '').value;
    const [mediaType, media] =
      isObject(requestBody) && isObject(requestBody.content) ? (Object.entries(requestBody.content)[0] ?? []) : [];
    const bodySchema = isObject(media) ? (media.schema as JsonObject) : undefined;
    const request: fc.Arbitrary<Parts> = fc.record({
      path: arbitraryFor(doc, pathSchema) as fc.Arbitrary<JsonObject>,
      query: arbitraryFor(doc, querySchema) as fc.Arbitrary<JsonObject>,
      ...(bodySchema ? { body: arbitraryFor(doc, bodySchema) } : {}),
    });
    const mutations: { part: 'path' | 'query' | 'body'; mutation: Mutation }[] = [
      ...parameterMutations(pathSchema, 'path').map((mutation) => ({ part: 'path' as const, mutation })),
      ...parameterMutations(querySchema, 'query').map((mutation) => ({ part: 'query' as const, mutation })),
      ...(bodySchema ? mutationsFor(doc, bodySchema).map((mutation) => ({ part: 'body' as const, mutation })) : []),
    ].filter(
      ({ part, mutation }) =>
        part !== 'body' || mediaType !== 'multipart/form-data' || mutation.what.endsWith('missing'),
    );

    it(`${id}: ${RUNS} valid requests from its schemas answer 2xx (seed ${SEED})`, async () => {
      await fc.assert(
        fc.asyncProperty(request, async (parts) => {
          const { response, error } = await send(client, method, op.path, parts, mediaType);
          expect(response.status, `${id} ${JSON.stringify(parts)} → ${JSON.stringify(error)}`).toBeGreaterThanOrEqual(
            200,
          );
          expect(response.status, `${id} ${JSON.stringify(parts)} → ${JSON.stringify(error)}`).toBeLessThan(300);
        }),
        { numRuns: RUNS, seed: SEED },
      );
    });

    // Operations that take only free strings and lenient values (ActionsGetWorkflow, repoGetKey …):
    // nothing in a request can break their document.
    if (mutations.length === 0) continue;
    it(`${id}: ${RUNS} requests with one constraint broken answer 4xx with the error body (seed ${SEED})`, async () => {
      await fc.assert(
        fc.asyncProperty(request, fc.constantFrom(...mutations), async (parts, { part, mutation }) => {
          const broken: Parts = {
            ...parts,
            [part]: mutation.apply(((parts[part] as JsonObject | undefined) ?? {}) as JsonObject),
          };
          const { response, error } = await send(client, method, op.path, broken, mediaType);
          const label = `${id}, ${mutation.what}: ${JSON.stringify(broken)}`;
          expect(response.status, label).toBeGreaterThanOrEqual(400);
          expect(response.status, label).toBeLessThan(500);
          expect(error, label).toMatchObject({ message: expect.any(String), url: expect.any(String) });
        }),
        { numRuns: RUNS, seed: SEED },
      );
    });
  }
});
