// The names Gitea refuses, as the document states them (a `pattern` and a `not` on the secret's
// name of updateUserSecret and on adminRenameUser's new name): every way in refuses them as the
// server does, with its status and message (services/secrets/validation.go ValidateName, 400;
// models/user/user.go IsUsableUsername, 422): the examples mock, the sandbox, the MSW handlers
// over the examples, and the proxy's request check, which reports each as a violation and passes
// the server's own answer on. The names Gitea takes pass everywhere.
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createSchemaValidator,
  type JsonObject,
  secretNameProblem,
  usernameProblem,
} from '../test/support/mock-internals.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { doc } from './support/coverage.js';
import { call } from './support/call.js';
import { useSandbox } from './support/sandbox.js';

type MswModule = typeof import('../mock/src/msw/handlers.js');
const BUILT = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));
const { createGiteaHandlers } = (await import(BUILT)) as MswModule;
const MSW_BASE = 'https://gitea.example.org/api/v1';

const sandbox = useSandbox({ maxWorlds: 50 });
let proxy: MockServer;
const violations: string[] = [];
const gitea = createGiteaHandlers({ baseUrl: MSW_BASE });
const msw = setupServer(...gitea.handlers);

beforeAll(async () => {
  proxy = await startMockServer({
    port: 0,
    proxy: { upstream: sandbox.current.origin, onViolations: (line) => violations.push(line) },
  });
  msw.listen({ onUnhandledRequest: 'bypass' });
});
afterAll(async () => {
  msw.close();
  await gitea.close();
  await proxy?.close();
});

type Where = 'examples' | 'sandbox' | 'msw' | 'proxy';
const WAYS: Where[] = ['examples', 'sandbox', 'msw', 'proxy'];
let worlds = 0;

/** One request to `where`, each in a world of its own (a fresh credential), with its answer's JSON body. */
async function inWorld(where: Where, method: string, path: string, payload: unknown) {
  const base = {
    examples: inject('mockBaseUrl'),
    sandbox: sandbox.current.baseUrl,
    msw: MSW_BASE,
    proxy: proxy.baseUrl,
  };
  const answer = await call(`${base[where]}${path}`, method, { token: `name-rules-${worlds++}`, json: payload });
  return { status: answer.status, body: answer.body === '' ? undefined : (JSON.parse(answer.body) as unknown), answer };
}

const putSecret = (where: Where, name: string) =>
  inWorld(where, 'PUT', `/user/actions/secrets/${encodeURIComponent(name)}`, { data: 's3cr3t' });
const rename = (where: Where, name: string) =>
  inWorld(where, 'POST', '/admin/users/bob/rename', { new_username: name });

const invalidName = (name: string) =>
  `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`;

describe('updateUserSecret: the names ValidateName refuses are 400 "invalid variable or secret name" everywhere', () => {
  it.each(['GITEA_TOKEN', 'github_token', 'Gitea_x', '1DEPLOY', 'ci', 'Ci', 'DEPLOY-TOKEN', 'ß'])(
    '%s',
    async (name) => {
      for (const where of WAYS) {
        const { status, body, answer } = await putSecret(where, name);
        expect([where, status, body]).toEqual([
          where,
          400,
          expect.objectContaining({ message: 'invalid variable or secret name' }),
        ]);
        if (where === 'proxy') expect(answer?.headers['x-contract-violations']).toBe('1');
      }
      expect(violations.splice(0)).toEqual([
        expect.stringMatching(/^updateUserSecret PUT .*: 1 violation: request path\.secretname: /),
      ]);
    },
  );

  it.each(['DEPLOY_TOKEN', 'deploy_token', '_x', 'GITEAX', 'ſecret', 'CIA'])('%s is stored: 201', async (name) => {
    for (const where of WAYS) {
      const { status, answer } = await putSecret(where, name);
      expect([where, status]).toEqual([where, 201]);
      if (where === 'proxy') expect(answer?.headers['x-contract-violations']).toBe('0');
    }
    expect(violations).toEqual([]);
  });
});

describe('adminRenameUser: the names IsUsableUsername refuses are 422 with its message everywhere', () => {
  it.each([
    ['bad name', invalidName('bad name')],
    ['rob--ert', invalidName('rob--ert')],
    ['robert-', invalidName('robert-')],
    ['-robert', invalidName('-robert')],
    ['', invalidName('')],
    ['API', 'name is reserved [name: api]'],
    ['Swagger.V1.json', 'name is reserved [name: swagger.v1.json]'],
    ['robert.Keys', 'name pattern is not allowed [pattern: *.keys]'],
  ])('%j', async (name, message) => {
    for (const where of WAYS) {
      const { status, body, answer } = await rename(where, name);
      expect([where, status, body]).toEqual([where, 422, expect.objectContaining({ message })]);
      if (where === 'proxy') expect(answer?.headers['x-contract-violations']).toBe('1');
    }
    expect(violations.splice(0)).toEqual([
      expect.stringMatching(/^adminRenameUser POST .*: 1 violation: request body\.new_username: /),
    ]);
  });

  it.each(['robert', 'rob-ert', 'rob.ert', 'r_2', 'apis', 'keys'])('%s is taken: 204', async (name) => {
    for (const where of WAYS) {
      const { status, answer } = await rename(where, name);
      expect([where, status]).toEqual([where, 204]);
      if (where === 'proxy') expect(answer?.headers['x-contract-violations']).toBe('0');
    }
    expect(violations).toEqual([]);
  });
});

describe("the document's patterns and Gitea's checks agree on any name", () => {
  const validator = createSchemaValidator(doc);
  const secretPath = '/user/actions/secrets/{secretname}';
  const parameters = (((doc.paths as JsonObject)[secretPath] as JsonObject).put as JsonObject)
    .parameters as JsonObject[];
  const secretPointer = `/paths/${secretPath.replaceAll('/', '~1')}/put/parameters/${parameters.findIndex((param) => param.name === 'secretname')}/schema`;
  // Names made of the characters the rules are about, and any others.
  const letters = fc.constantFrom(...'aAcCgGiItTeEhHuUbBsSkK_-.1ſKß ', 'api', 'ghost', '.keys', '.PNG', 'GITEA_', 'ci');
  const names = fc.oneof(
    fc.array(letters, { maxLength: 8 }).map((parts) => parts.join('')),
    fc.string(),
  );

  it('updateUserSecret {secretname}', () => {
    fc.assert(
      fc.property(names, (name) => {
        expect(validator.check(secretPointer, name).length === 0).toBe(secretNameProblem(name) === undefined);
      }),
      { numRuns: 3_000 },
    );
  });

  it('adminRenameUser new_username', () => {
    fc.assert(
      fc.property(names, (name) => {
        const valid = validator.check('/components/schemas/RenameUserOption', { new_username: name }).length === 0;
        expect(valid).toBe(usernameProblem(name) === undefined);
      }),
      { numRuns: 3_000 },
    );
  });
});
