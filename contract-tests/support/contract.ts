// The contract harness: for one tag's operations, called through the client against the mock,
// every documented response is asked for and checked against the document, invalid requests
// must answer 422, and missing credentials 401. What each suite exercised is recorded.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ApiError, createGiteaClient, unwrap, type GiteaClient } from '../../src/index.js';
import {
  createSchemaValidator,
  deref,
  isObject,
  type JsonObject,
  listOperations,
  pointer,
} from '../../test/support/mock-internals.js';
import { doc, documented, key, saveCoverage } from './coverage.js';
import { firstExample } from './http.js';

export type Result = { data?: unknown; error?: unknown; response: Response };
export type Extra = { headers?: Record<string, string>; redirect?: RequestRedirect };

export interface OperationContract {
  /** A valid call through the client; `extra` carries headers such as `Prefer`, and a redirect mode. */
  call(client: GiteaClient, extra: Extra): Promise<Result>;
  /** Requests the document forbids, by what is wrong with them; each must answer 422. */
  invalid: Record<string, (client: GiteaClient) => Promise<Result>>;
}

const schemas = createSchemaValidator(doc);
const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));

/** The response object of a status, and the JSON pointer where it really lives. */
function responseOf(operationId: string, status: number): { response: JsonObject; location: string } {
  const op = operations.get(operationId)!;
  const responses = op.operation.responses as JsonObject;
  const resolved = deref(doc, responses[String(status)], `${op.location}/responses/${status}`);
  return { response: resolved.value as JsonObject, location: resolved.location };
}

async function apiErrorOf(result: Result): Promise<ApiError> {
  const error = await unwrap(Promise.resolve(result)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

export function describeContract(suite: string, contracts: Record<string, OperationContract>): void {
  const baseUrl = inject('mockBaseUrl');
  const client = createGiteaClient({ baseUrl, auth: { token: 'contract-test-token' }, retry: 0 });
  const anonymous = createGiteaClient({ baseUrl, retry: 0 });
  const exercised = new Set<string>();

  for (const [operationId, contract] of Object.entries(contracts)) {
    const codes = documented.get(operationId);
    describe(operationId, () => {
      it('is an operation of the document', () => expect(codes, `${operationId} is not in openapi.yaml`).toBeDefined());
      const success = Math.min(...(codes ?? []).filter((code) => code < 300));

      it(`answers ${success} with data that validates against the document`, async () => {
        const result = await contract.call(client, {});
        expect(result.response.status, operationId).toBe(success);
        const { response, location } = responseOf(operationId, success);
        const content = isObject(response.content) ? response.content : {};
        if (content['application/json'] && success !== 205) {
          expect(
            schemas.check(`${location}/content/${pointer(['application/json']).slice(1)}/schema`, result.data),
            operationId,
          ).toEqual([]);
        } else if (Object.keys(content).some((type) => type.startsWith('text/'))) {
          expect(typeof result.data, operationId).toBe('string');
        }
        exercised.add(key(operationId, success));
      });

      for (const code of codes ?? []) {
        if (code === success) continue;
        it(`answers the documented ${code} (Prefer: code=${code})${code >= 300 ? ' as an ApiError' : ''}`, async () => {
          const redirect = code >= 300 && code < 400;
          // The client follows a redirect that stays on the server; a documented 301 or 307 is seen unfollowed.
          const result = await contract.call(client, {
            headers: { Prefer: `code=${code}` },
            ...(redirect ? { redirect: 'manual' as const } : {}),
          });
          expect(result.response.status, operationId).toBe(code);
          if (redirect)
            expect(result.response.headers.get('location'), `${operationId} ${code} Location`).toMatch(/^\/api\/v1\//);
          if (code >= 300) {
            const error = await apiErrorOf(result);
            expect(error.status).toBe(code);
            expect(error.operationId).toBe(operationId);
            const content = responseOf(operationId, code).response.content;
            const [mediaType, media] = Object.entries(isObject(content) ? content : {})[0] ?? [];
            if (mediaType && isObject(media)) {
              const example = firstExample(doc, media);
              expect(error.body, `${operationId} ${code} body`).toEqual(example);
            }
          }
          exercised.add(key(operationId, code));
        });
      }

      for (const [what, call] of Object.entries(contract.invalid)) {
        it(`answers 422 with the service's error body for ${what}`, async () => {
          const error = await apiErrorOf(await call(client));
          expect(error.status, operationId).toBe(422);
          expect(Object.keys(error.body as object).sort()).toEqual(['message', 'url']);
          expect((error.body as { message: string }).message).not.toBe('');
          exercised.add(key(operationId, 422));
        });
      }

      it('answers 401 "token is required" without credentials', async () => {
        const error = await apiErrorOf(await contract.call(anonymous, {}));
        expect(error.status).toBe(401);
        expect((error.body as { message: string }).message).toBe('token is required');
        exercised.add(key(operationId, 401));
      });
    });
  }

  it(`${suite}: every documented response of its operations was exercised`, () => {
    const missed = Object.keys(contracts).flatMap((id) =>
      (documented.get(id) ?? []).filter((code) => !exercised.has(key(id, code))).map((code) => key(id, code)),
    );
    expect(missed, 'documented responses no test asked for').toEqual([]);
  });
  afterAll(() => saveCoverage(inject('coverageDir'), suite, exercised));
}
