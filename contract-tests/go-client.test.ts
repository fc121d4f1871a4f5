// Request bodies as clients send them for fields they leave unset: Gitea's option structs have no
// `omitempty`, so a Go client sends each field it does not set, as `null` where the field is a
// pointer, a slice or a map, and as its zero value (`""`, `false`, `0`) where it is a plain
// string, bool or number (Gitea's own structs, which its Go SDK copies); a client of pointers
// sends `null` throughout. The server reads both as fields left out. Each operation with a JSON
// body is sent both ways (required fields and zero values from test/service-facts.json): the
// examples mock must take it, and the sandbox must answer it as Gitea does.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import {
  deref,
  isObject,
  type Json,
  listOperations,
  loadDocument,
  type Operation,
  resolvePointer,
} from '../test/support/mock-internals.js';
import { call, type Reply } from './support/call.js';
import { exampleRequest } from './support/http.js';
import { useSandbox } from './support/sandbox.js';

const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const facts = JSON.parse(readFileSync(new URL('../test/service-facts.json', import.meta.url), 'utf8')) as {
  requests: Record<string, { required: Record<string, Json>; zero: Record<string, Json> }>;
};

/** Operations with a JSON body, with the bodies clients send for each. */
const bodies = listOperations(doc).flatMap((op) => {
  const body = deref(doc, op.operation.requestBody, '').value;
  const json = isObject(body) && isObject(body.content) ? body.content['application/json'] : undefined;
  const ref = isObject(json) && isObject(json.schema) ? json.schema.$ref : undefined;
  if (typeof ref !== 'string') return [];
  const schema = resolvePointer(doc, ref);
  const properties = isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
  const { required = {}, zero = {} } = facts.requests[ref.replace('#/components/schemas/', '')] ?? {};
  const bodyOf = (unset: (name: string) => Json) =>
    Object.fromEntries(properties.map((name) => [name, Object.hasOwn(required, name) ? required[name]! : unset(name)]));
  return [
    { op, client: 'of pointers', tag: 'null', goBody: bodyOf(() => null) },
    {
      op,
      client: "of Gitea's structs",
      tag: 'zero',
      goBody: bodyOf((name) => (Object.hasOwn(zero, name) ? zero[name]! : null)),
    },
  ];
});

function successOf(op: Operation): number {
  const responses = isObject(op.operation.responses) ? Object.keys(op.operation.responses).map(Number) : [];
  return Math.min(...responses.filter((code) => code < 300));
}

async function sendGoBody(base: string, op: Operation, goBody: Record<string, Json>, token: string): Promise<Reply> {
  const req = await exampleRequest(doc, base, op);
  return call(req.url, req.method, {
    headers: { ...req.headers, authorization: `token ${token}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(goBody)),
  });
}

const json = (answer: Reply): Record<string, unknown> => JSON.parse(answer.body) as Record<string, unknown>;

/** What Gitea answers each Go client's body with, in a fresh sandbox world: the example's path values, nothing set. */
const SANDBOX: Record<string, (answer: Reply) => void> = {
  repoEditHook: (answer) => {
    expect(answer.status).toBe(200);
    // events null resets to push; branch_filter and the authorization header are cleared; the rest stays.
    expect(json(answer)).toMatchObject({
      events: ['push'],
      branch_filter: '',
      authorization_header: '',
      active: true,
      name: 'CI trigger',
      config: { url: 'https://ci.example.net/hooks/gitea', content_type: 'json' },
    });
  },
  userCreateOAuth2Application: (answer) => {
    expect(answer.status).toBe(201);
    expect(json(answer)).toMatchObject({
      name: 'Rocket CI dashboard',
      confidential_client: false,
      skip_secondary_authorization: false,
    });
  },
  repoMigrate: (answer) => {
    expect(answer.status).toBe(201);
    expect(json(answer)).toMatchObject({
      full_name: 'alice/launchpad',
      private: false,
      mirror: false,
      description: '',
    });
  },
  issueRemoveAssignees: (answer) => {
    expect(answer.status).toBe(200);
    expect((json(answer).assignees as { login: string }[]).map((user) => user.login)).toEqual(['bob', 'carol']);
  },
  repoEditPullRequest: (answer) => {
    expect(answer.status).toBe(201);
    expect(json(answer)).toMatchObject({
      title: 'Fix countdown off-by-one',
      state: 'open',
      content_version: 2,
      milestone: { id: 6001 },
    });
  },
  userCurrentPostGPGKey: (answer) => {
    expect(answer.status).toBe(201);
    expect(json(answer)).toMatchObject({ key_id: '3AA5C34371567BD2', verified: false });
  },
  orgEditLabel: (answer) => {
    expect(answer.status).toBe(200);
    // is_archived null un-archives; everything else stays.
    expect(json(answer)).toMatchObject({ name: 'priority/high', color: 'd93f0b', is_archived: false, exclusive: true });
  },
  renderMarkdown: (answer) => {
    // No Text: Gitea writes nothing at all.
    expect([answer.status, answer.body, answer.headers['content-type']]).toEqual([200, '', undefined]);
  },
  updateUserSecret: (answer) => expect([answer.status, answer.body]).toEqual([201, '']),
  issueEditMilestone: (answer) => {
    expect(answer.status).toBe(200);
    // due_on null clears the deadline; title, state and description stay.
    expect(json(answer)).toMatchObject({
      id: 6001,
      title: 'v1.2.0',
      state: 'open',
      description: 'First crewed flight.',
      due_on: null,
    });
  },
  adminRenameUser: (answer) => expect([answer.status, answer.body]).toEqual([204, '']),
  repoAddCollaborator: (answer) => expect([answer.status, answer.body]).toEqual([204, '']),
};

describe('bodies as Go clients send them, every optional field null or its zero value', () => {
  const sandbox = useSandbox({ maxWorlds: 50 });

  it('covers every operation with a JSON body', () => {
    expect([...new Set(bodies.map(({ op }) => String(op.operation.operationId)))].sort()).toEqual(
      Object.keys(SANDBOX).sort(),
    );
  });

  for (const { op, client, tag, goBody } of bodies) {
    const id = String(op.operation.operationId);
    it(`${id}, a client ${client}: the examples mock takes ${JSON.stringify(goBody).slice(0, 80)}…`, async () => {
      const answer = await sendGoBody(inject('mockBaseUrl'), op, goBody, 'go-client');
      expect(answer.status, answer.body).toBe(successOf(op));
    });

    it(`${id}, a client ${client}: the sandbox answers it as Gitea does`, async () => {
      SANDBOX[id]!(await sendGoBody(sandbox.current.baseUrl, op, goBody, `go-client-${id}-${tag}`));
    });
  }
});
