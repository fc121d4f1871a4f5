// Request bodies, each to at most MAX_BODY_BYTES, all in flight within one budget (the proxy takes
// from it too): past it 503 with `Retry-After`, past the whole budget 413. Then read as Gitea's
// binding reads them (content types, JSON, UTF-8), a multipart body as its parts (multipart.ts).
import type { IHttpOperation } from '@stoplight/types';
import { latin1Text, readBounded } from '../common/bytes.js';
import { jsonShape, MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { parseMediaType } from './media-type.js';
import { parseForm, type FormPart } from './multipart.js';

/** The most one request body may hold, in every mode. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Why a body's bytes were refused: its answer, in the service's error dialect. */
interface BodyRefusal {
  status: 413 | 503;
  message: string;
}

/** One request's share of the budget. */
export interface BodyReading {
  /** Takes `bytes` more for this request; the refusal when they do not fit, and then this request holds nothing. */
  take(bytes: number): BodyRefusal | undefined;
  /** Gives back what this request holds, for good: it takes nothing after. */
  release(): void;
  /** The refusal of a body declared this long, which can never fit, before a byte of it is read. */
  declared(length: number): BodyRefusal | undefined;
}

export interface BodyBudget {
  /** The bytes all requests may hold together. */
  readonly limit: number;
  /** A share for one request, holding nothing yet. */
  reading(): BodyReading;
}

/**
 * The default budget: an eighth of V8's heap, as the sandbox's writes in progress get another
 * eighth and its worlds half (sandbox-limits.ts), and never less than two bodies of
 * MAX_BODY_BYTES (the proxy reads a chunk past it before it streams the rest). Without a known
 * heap (a browser), bodies are bounded one by one only.
 */
export function defaultBodyBudget(heapLimit: number | undefined): number {
  return heapLimit === undefined ? Infinity : Math.max(2 * MAX_BODY_BYTES, Math.floor(heapLimit / 8));
}

export function createBodyBudget(limit: number): BodyBudget {
  if (!(limit >= 1)) throw new TypeError('the budget of request bodies in flight must be one byte or more');
  let held = 0;
  const tooLarge = (): BodyRefusal => ({
    status: 413,
    message: `request body exceeds the ${limit} bytes of request bodies this server holds at once`,
  });
  const full: BodyRefusal = {
    status: 503,
    message: `request bodies being read or held take the ${limit} bytes this server holds at once; try again shortly`,
  };
  return {
    limit,
    reading() {
      let mine = 0;
      let over = false;
      const release = (): void => {
        held -= mine;
        mine = 0;
        over = true;
      };
      return {
        take(bytes) {
          if (over) return full;
          if (mine + bytes > limit) {
            release();
            return tooLarge();
          }
          if (held + bytes > limit) {
            release();
            return full;
          }
          mine += bytes;
          held += bytes;
          return undefined;
        },
        release,
        declared: (length) => (length > limit ? tooLarge() : undefined),
      };
    },
  };
}

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
  try {
    const read = await readBounded(request.body, MAX_BODY_BYTES, { take: reading.take, keep: true });
    if (read.complete) return { ok: true, data: read.bytes };
    reading.release();
    return { ok: false, ...(read.refused ?? TOO_LARGE) };
  } catch {
    return { ok: false, status: 400, message: 'the request body was cut short' };
  }
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
