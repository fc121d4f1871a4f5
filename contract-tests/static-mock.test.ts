// `npx prism mock openapi.yaml` (the plain CLI, static mode) answers every operation with the
// document's own examples: the success example by default and each documented response when
// asked with `Prefer: code=…`. This is what a frontend team sees before any launcher is involved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deref,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  loadDocument,
} from '../test/support/mock-internals.js';
import { call, type Reply } from './support/call.js';
import { exampleRequest, firstExample } from './support/http.js';
import { startPrismCli, type PrismCli } from './support/prism-cli.js';

const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const operations = listOperations(doc);

function expectedBody(response: JsonObject): { mediaType?: string; example?: Json | undefined } {
  const content = isObject(response.content) ? Object.entries(response.content) : [];
  const [mediaType, media] = content[0] ?? [];
  return mediaType !== undefined && isObject(media) ? { mediaType, example: firstExample(doc, media) } : {};
}

function assertAnswer(answer: Reply, status: number, response: JsonObject, label: string): void {
  expect(answer.status, `${label}: status`).toBe(status);
  const { mediaType, example } = expectedBody(response);
  if (mediaType === undefined) {
    expect(answer.body, `${label}: no body`).toBe('');
    return;
  }
  expect(String(answer.headers['content-type']), `${label}: content type`).toContain(mediaType);
  if (mediaType.endsWith('json')) expect(JSON.parse(answer.body), `${label}: body`).toEqual(example);
  else expect(answer.body, `${label}: body`).toBe(example);
}

describe('prism mock openapi.yaml (CLI, static)', () => {
  let prism: PrismCli;
  beforeAll(async () => {
    // --errors turns an example that violates its own schema into a 500 instead of a log line.
    prism = await startPrismCli(['--errors', '-v', 'error']);
    // Longer than the start's own bound, which stops Prism before it gives up.
  }, 120_000);
  afterAll(async () => {
    await prism?.stop();
  });

  it('serves the 20 operations of the document', () => {
    expect(operations).toHaveLength(20);
  });

  describe.each(operations.map((op) => [String(op.operation.operationId), op] as const))('%s', (_id, op) => {
    const responses = isObject(op.operation.responses) ? op.operation.responses : {};
    const codes = Object.keys(responses)
      .map(Number)
      .sort((a, b) => a - b);

    it('answers with the success example', async () => {
      const success = codes.find((code) => code >= 200 && code < 300);
      expect(success, 'a documented 2xx').toBeDefined();
      const req = await exampleRequest(doc, prism.origin, op);
      const answer = await call(req.url, req.method, { headers: req.headers, body: req.body });
      const response = deref(doc, responses[String(success)], '').value;
      assertAnswer(answer, Number(success), isObject(response) ? response : {}, `${req.method} ${req.url.pathname}`);
    });

    it('answers every documented status with its first example (Prefer: code=…)', async () => {
      for (const code of codes) {
        const req = await exampleRequest(doc, prism.origin, op);
        const answer = await call(req.url, req.method, {
          headers: { ...req.headers, prefer: `code=${code}` },
          body: req.body,
        });
        const response = deref(doc, responses[String(code)], '').value;
        assertAnswer(answer, code, isObject(response) ? response : {}, `${req.method} ${req.url.pathname} → ${code}`);
      }
    });
  });

  it('answers 401 with the service error body when credentials are missing', async () => {
    const answer = await call(new URL(`${prism.origin}/admin/orgs`), 'GET');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({
      message: 'token is required',
      url: 'https://gitea.example.org/api/swagger',
    });
  });
});
