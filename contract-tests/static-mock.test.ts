// `npx prism mock openapi.yaml` (the plain CLI, static mode) answers every operation with the
// document's own examples: the success example by default and each documented response when
// asked with `Prefer: code=…`. This is what a frontend team sees before any launcher is involved.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deref, isObject, listOperations, loadDocument, operationParameters, type Json, type JsonObject } from '../test/support/document.js';
import { startPrismCli, type PrismCli } from './support/prism-cli.js';

const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const operations = listOperations(doc);
const BASIC = `Basic ${Buffer.from('alice:correct horse battery staple').toString('base64')}`;

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

// node:http instead of fetch: fetch drops the body of a 205, which E8 really sends.
function send(url: URL, method: string, headers: Record<string, string>, body?: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // An explicit length: Node would send a DELETE body chunked, which Prism cannot read.
    const length = body === undefined ? {} : { 'content-length': String(body.length) };
    const req = request(url, { method, headers: { ...headers, ...length }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The first named example of a media type, resolved. */
function firstExample(media: JsonObject): Json | undefined {
  const examples = isObject(media.examples) ? Object.values(media.examples) : [];
  const first = examples[0];
  if (first === undefined) return undefined;
  const resolved = deref(doc, first, '').value;
  return isObject(resolved) ? resolved.value : undefined;
}

/** A request built only from the document: parameter examples and the request body example. */
async function exampleRequest(origin: string, op: (typeof operations)[number]) {
  const url = new URL(`${origin}${op.path}`);
  let pathname = op.path;
  for (const { param } of operationParameters(doc, op)) {
    const value = String(param.example);
    if (param.in === 'path') pathname = pathname.replace(`{${String(param.name)}}`, encodeURIComponent(value));
    if (param.in === 'query') url.searchParams.set(String(param.name), value);
  }
  url.pathname = pathname;
  const headers: Record<string, string> = { authorization: BASIC };
  let body: Buffer | undefined;
  const requestBody = deref(doc, op.operation.requestBody, '').value;
  if (isObject(requestBody) && isObject(requestBody.content)) {
    const [mediaType, media] = Object.entries(requestBody.content)[0] ?? [];
    const example = isObject(media) ? firstExample(media) : undefined;
    if (mediaType === 'multipart/form-data' && isObject(example)) {
      const form = new FormData();
      for (const [field, value] of Object.entries(example)) form.append(field, new Blob([String(value)]), 'upload.bin');
      const encoded = new Response(form);
      headers['content-type'] = encoded.headers.get('content-type') ?? '';
      body = Buffer.from(await encoded.arrayBuffer());
    } else if (mediaType !== undefined) {
      headers['content-type'] = mediaType;
      body = Buffer.from(JSON.stringify(example));
    }
  }
  return { url, headers, body, method: op.method.toUpperCase() };
}

function expectedBody(response: JsonObject): { mediaType?: string; example?: Json | undefined } {
  const content = isObject(response.content) ? Object.entries(response.content) : [];
  const [mediaType, media] = content[0] ?? [];
  return mediaType !== undefined && isObject(media) ? { mediaType, example: firstExample(media) } : {};
}

function assertAnswer(answer: RawResponse, status: number, response: JsonObject, label: string): void {
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
  });
  afterAll(async () => {
    await prism?.stop();
  });

  it('serves the 20 operations of the document', () => {
    expect(operations).toHaveLength(20);
  });

  describe.each(operations.map((op) => [String(op.operation.operationId), op] as const))('%s', (_id, op) => {
    const responses = isObject(op.operation.responses) ? op.operation.responses : {};
    const codes = Object.keys(responses).map(Number).sort((a, b) => a - b);

    it('answers with the success example', async () => {
      const success = codes.find((code) => code >= 200 && code < 300);
      expect(success, 'a documented 2xx').toBeDefined();
      const req = await exampleRequest(prism.origin, op);
      const answer = await send(req.url, req.method, req.headers, req.body);
      const response = deref(doc, responses[String(success)], '').value;
      assertAnswer(answer, Number(success), isObject(response) ? response : {}, `${req.method} ${req.url.pathname}`);
    });

    it('answers every documented status with its first example (Prefer: code=…)', async () => {
      for (const code of codes) {
        const req = await exampleRequest(prism.origin, op);
        const answer = await send(req.url, req.method, { ...req.headers, prefer: `code=${code}` }, req.body);
        const response = deref(doc, responses[String(code)], '').value;
        assertAnswer(answer, code, isObject(response) ? response : {}, `${req.method} ${req.url.pathname} → ${code}`);
      }
    });
  });

  it('answers 401 with the service error body when credentials are missing', async () => {
    const answer = await send(new URL(`${prism.origin}/admin/orgs`), 'GET', {});
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ message: 'token is required', url: 'https://gitea.example.org/api/swagger' });
  });
});
