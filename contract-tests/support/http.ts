// Requests built from the document, and raw bytes for what HTTP clients refuse to send (CR/LF in
// headers, unnormalised paths); support/call.ts sends the requests.
import { connect } from 'node:net';
import {
  deref,
  isObject,
  type Json,
  type JsonObject,
  type Operation,
  operationParameters,
} from '../../test/support/mock-internals.js';

export interface PreparedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export const BASIC_ALICE = `Basic ${Buffer.from('alice:correct horse battery staple').toString('base64')}`;

/**
 * Writes `bytes` (a string as Latin-1, one byte per character) to a fresh connection to `origin`,
 * ending its side when `end`, and resolves with every byte that comes back until the connection
 * closes, however it closes; rejects if it stays open past `timeoutMs`.
 */
export function exchangeRaw(
  origin: string,
  bytes: string | Buffer,
  { timeoutMs = 10_000, end = false } = {},
): Promise<Buffer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection stayed open past ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
    if (end) socket.end(data);
    else socket.write(data);
  });
}

/** Writes `text` (UTF-8) to a fresh socket and returns everything the server sends until it closes. */
export async function sendRaw(origin: string, text: string | Buffer, timeoutMs = 10_000): Promise<string> {
  return (
    await exchangeRaw(origin, typeof text === 'string' ? Buffer.from(text) : text, { timeoutMs, end: true })
  ).toString('utf8');
}

/** Status line, headers (names in lower case) and JSON body of a raw HTTP/1.1 answer. */
export function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const head = answer.indexOf('\r\n\r\n');
  const headers: Record<string, string> = {};
  for (const line of answer.slice(0, head).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: JSON.parse(answer.slice(head + 4)) as unknown };
}

/** The first named example of a media type, resolved. */
export function firstExample(doc: JsonObject, media: JsonObject): Json | undefined {
  const examples = isObject(media.examples) ? Object.values(media.examples) : [];
  const first = examples[0];
  if (first === undefined) return undefined;
  const resolved = deref(doc, first, '').value;
  return isObject(resolved) ? resolved.value : undefined;
}

/** A request built only from the document: parameter examples (or `pathValues` for path parameters) and the request body example. */
export async function exampleRequest(
  doc: JsonObject,
  base: string,
  op: Operation,
  pathValues: Record<string, string> = {},
): Promise<PreparedRequest> {
  let path = op.path;
  const query = new URLSearchParams();
  for (const { param } of operationParameters(doc, op)) {
    const value = (param.in === 'path' ? pathValues[String(param.name)] : undefined) ?? String(param.example);
    if (param.in === 'path') path = path.replace(`{${String(param.name)}}`, encodeURIComponent(value));
    if (param.in === 'query') query.set(String(param.name), value);
  }
  const url = new URL(`${base}${path}`);
  url.search = query.toString();
  const headers: Record<string, string> = { authorization: BASIC_ALICE };
  let body: Buffer | undefined;
  const requestBody = deref(doc, op.operation.requestBody, '').value;
  if (isObject(requestBody) && isObject(requestBody.content)) {
    const [mediaType, media] = Object.entries(requestBody.content)[0] ?? [];
    const example = isObject(media) ? firstExample(doc, media) : undefined;
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
  return { url, headers, method: op.method.toUpperCase(), ...(body === undefined ? {} : { body }) };
}

/**
 * The first of `answers` to settle, with its index; rejects, saying `what` was awaited, when none
 * settles within `timeoutMs` (a bound far above the event it waits for, never a speed goal).
 */
export function firstSettled<T>(
  answers: readonly Promise<T>[],
  what: string,
  timeoutMs = 20_000,
): Promise<{ index: number; value: T }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms: ${what}`)), timeoutMs);
    for (const [index, answer] of answers.entries()) {
      answer.then(
        (value) => {
          clearTimeout(timer);
          resolve({ index, value });
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    }
  });
}
