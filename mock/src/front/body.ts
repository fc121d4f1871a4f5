// Reads a request body with a hard size limit and turns it into what Prism validates, refusing
// what Gitea's binding refuses (empty or unsupported content types, malformed JSON, bad UTF-8)
// and multipart bodies Go's reader cannot read (multipart.ts): a form comes as its parts.
import type { IHttpOperation } from '@stoplight/types';
import { concatBytes, latin1Text } from '../common/bytes.js';
import { jsonShape, MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { MAX_BODY_BYTES, type BodyReading, type BodyRefusal } from './body-budget.js';
import { parseMediaType } from './media-type.js';
import { parseForm, type FormPart } from './multipart.js';

/** Deepest nesting Go's encoding/json reads. */
export const GO_MAX_DEPTH = 10_000;

export type BodyResult =
  /**
   * A multipart body comes as its parts (`form`), with no `body`; a body without a type that is
   * read as bytes comes with the type it is read as.
   */
  | { ok: true; body: unknown; form?: FormPart[]; contentType?: string }
  | { ok: false; status: 413 | 422 | 400 | 503; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

type RawResult = { ok: true; data: Uint8Array } | { ok: false; status: 413 | 400 | 503; message: string };

const TOO_LARGE: BodyRefusal = { status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` };

/**
 * The whole body, up to MAX_BODY_BYTES, its bytes taken from the server's budget (`reading`) as
 * they arrive; a declared length past either is refused before reading. Past a bound the rest
 * stays unread: the answer must close the connection.
 */
export async function readBodyBytes(request: Request, reading: BodyReading): Promise<RawResult> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  const never = declared > MAX_BODY_BYTES ? TOO_LARGE : reading.declared(declared);
  if (never) return { ok: false, ...never };
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      const refusal = size > MAX_BODY_BYTES ? TOO_LARGE : reading.take(value.byteLength);
      if (refusal) {
        // Not cancelled: on a Node socket that would end the connection before the answer is sent.
        // What is left stays unread, and the answer closes the connection.
        reader.releaseLock();
        reading.release();
        return { ok: false, ...refusal };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, status: 400, message: 'the request body was cut short' };
  }
  return { ok: true, data: concatBytes(chunks) };
}

/**
 * Which bound of every JSON body the mock reads a parsed `body` is past, if any: nested deeper
 * than GO_MAX_DEPTH levels, or more than MAX_CHECKED_VALUES values.
 */
export function pastJsonBounds(body: unknown): 'depth' | 'values' | undefined {
  const shape = jsonShape(body, MAX_CHECKED_VALUES, GO_MAX_DEPTH);
  return shape.depth > GO_MAX_DEPTH ? 'depth' : shape.values > MAX_CHECKED_VALUES ? 'values' : undefined;
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

/** Whether Gitea binds the operation's body to an option struct: the operations that take JSON. */
function isBound(operation: IHttpOperation): boolean {
  return (operation.request?.body?.contents ?? []).some((content) => isJson(content.mediaType.toLowerCase()));
}

const EMPTY_CONTENT_TYPE = { ok: false, status: 422, message: '[]: Empty Content-Type' } as const;

/**
 * `undefined` when the request has no body. As Gitea's binding reads a body: a POST or PUT
 * without a `Content-Type` answers `422 "[]: Empty Content-Type"`, body or not, and a PATCH or
 * DELETE without one has its body ignored, read as `{}`; an empty body with a JSON type is `{}`
 * too, and malformed JSON answers `422 "[]: …"`. A multipart body is read as a form for an
 * `operation` that takes one; to another, Prism answers that it does not take the type.
 * Operations that bind nothing (an upload) get the body as it is.
 */
export async function readBody(request: Request, operation: IHttpOperation, reading: BodyReading): Promise<BodyResult> {
  const contentType = request.headers.get('content-type')?.trim() || undefined;
  const bound = isBound(operation);
  if (bound && contentType === undefined && (request.method === 'POST' || request.method === 'PUT'))
    return EMPTY_CONTENT_TYPE;
  if (request.body === null) return { ok: true, body: undefined };
  const raw = await readBodyBytes(request, reading);
  if (!raw.ok) return raw;
  if (contentType === undefined) {
    if (bound) return { ok: true, body: {} };
    // An upload takes a body without a type as the file itself, as if it were sent as bytes.
    if (raw.data.length === 0) return { ok: true, body: undefined };
    return { ok: true, body: latin1Text(raw.data), contentType: 'application/octet-stream' };
  }
  const mime = parseMediaType(contentType);
  // Prism's parser throws on it; Gitea's binding finds no type it reads in it.
  if (!mime)
    return {
      ok: false,
      status: 422,
      message: `[]: Unsupported Content-Type (not a media type: ${JSON.stringify(contentType.slice(0, 100))})`,
    };
  const mediaType = mime.essence;
  if (isJson(mediaType) && bound) {
    // Go's decoder meets the end at once and binds nothing.
    if (raw.data.length === 0) return { ok: true, body: {} };
    let text: string;
    try {
      text = utf8.decode(raw.data);
    } catch {
      return { ok: false, status: 422, message: '[]: the request body is not valid UTF-8' };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return { ok: false, status: 422, message: `[]: ${error instanceof Error ? error.message : 'malformed JSON'}` };
    }
    const past = pastJsonBounds(body);
    // Go's decoder refuses it as it reads, so Gitea's binding answers it so.
    if (past === 'depth') return { ok: false, status: 422, message: '[]: exceeded max depth' };
    if (past === 'values')
      return {
        ok: false,
        status: 413,
        message: `the request body holds more than ${MAX_CHECKED_VALUES} JSON values, more than the mock reads`,
      };
    return { ok: true, body };
  }
  if (raw.data.length === 0) return { ok: true, body: undefined };
  // Without a boundary, or to an operation that takes no form, Prism's own answer (an unsupported
  // content type) stands.
  const boundary = mediaType === 'multipart/form-data' && formContent(operation) ? mime.params.get('boundary') : null;
  if (boundary) {
    const form = parseForm(raw.data, boundary);
    // Gitea answers 500 (plain text); a 4xx in the dialect says what is wrong with the request.
    if (!form.ok) return { ok: false, status: 400, message: `failed to parse request multipart form: ${form.message}` };
    return { ok: true, body: undefined, form: form.parts };
  }
  // Other bodies go to Prism as text, which it validates; they may hold any bytes, so no strict
  // decoding here.
  return { ok: true, body: latin1Text(raw.data) };
}

/** The operation's multipart/form-data body, if it takes one. */
export function formContent(operation: IHttpOperation) {
  return operation.request?.body?.contents?.find(
    (content) => content.mediaType.toLowerCase() === 'multipart/form-data',
  );
}
