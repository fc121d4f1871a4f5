// Request bodies within one budget, read as Gitea's binding reads them, a multipart body as Go's mime/multipart does.
import type { IHttpOperation } from '@stoplight/types';
import { attempt } from '../common/attempt.js';
import {
  concatBytes,
  bytesAt,
  indexOfBytes,
  latin1Bytes,
  latin1Text,
  readBounded,
  utf8Bytes,
  utf8Text,
} from '../common/bytes.js';
import { jsonShape, MAX_CHECKED_VALUES } from '../contract/json-shape.js';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

type BodyRefusal = { status: 413 | 503; message: string };
export type BodyBudget = ReturnType<typeof createBodyBudget>;
export type BodyReading = ReturnType<BodyBudget['reading']>;

/** An eighth of V8's heap (sandbox-limits.ts has the rest), at least two bodies (the proxy reads a chunk past one). */
export function defaultBodyBudget(heapLimit: number | undefined): number {
  return heapLimit === undefined ? Infinity : Math.max(2 * MAX_BODY_BYTES, Math.floor(heapLimit / 8));
}

export function createBodyBudget(limit: number) {
  if (!(limit >= 1)) throw new TypeError('the budget of request bodies in flight must be one byte or more');
  let held = 0;
  const tooLarge: BodyRefusal = {
    status: 413,
    message: `request body exceeds the ${limit} bytes of request bodies this server holds at once`,
  };
  const full: BodyRefusal = {
    status: 503,
    message: `request bodies being read or held take the ${limit} bytes this server holds at once; try again shortly`,
  };
  return {
    reading() {
      let mine = 0;
      let over = false;
      const release = (): void => {
        held -= mine;
        mine = 0;
        over = true;
      };
      return {
        take(bytes: number): BodyRefusal | undefined {
          if (over) return full;
          const refusal = mine + bytes > limit ? tooLarge : held + bytes > limit ? full : undefined;
          if (refusal) release();
          else {
            mine += bytes;
            held += bytes;
          }
          return refusal;
        },
        release,
        declared: (length: number) => (length > limit ? tooLarge : undefined),
      };
    },
  };
}

// Go's encoding/json
export const GO_MAX_DEPTH = 10_000;

export type BodyResult =
  | { ok: true; body: unknown; form?: FormPart[]; contentType?: string }
  | { ok: false; status: 413 | 422 | 400 | 503; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const strictUtf8 = (bytes: Uint8Array): string | undefined => attempt(() => utf8.decode(bytes));

const TOO_LARGE: BodyRefusal = { status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` };

export async function readBodyBytes(request: Request, reading: BodyReading) {
  const declared = Number(request.headers.get('content-length') ?? 0);
  const never = declared > MAX_BODY_BYTES ? TOO_LARGE : reading.declared(declared);
  if (never) return { ok: false, ...never } as const;
  try {
    const read = await readBounded(request.body, MAX_BODY_BYTES, { take: reading.take, keep: true });
    if (read.complete) return { ok: true, data: read.bytes } as const;
    reading.release();
    return { ok: false, ...(read.refused ?? TOO_LARGE) } as const;
  } catch {
    return { ok: false, status: 400, message: 'the request body was cut short' } as const;
  }
}

export function pastJsonBounds(body: unknown): 'depth' | 'values' | undefined {
  const shape = jsonShape(body, MAX_CHECKED_VALUES, GO_MAX_DEPTH);
  return shape.depth > GO_MAX_DEPTH ? 'depth' : shape.values > MAX_CHECKED_VALUES ? 'values' : undefined;
}

const TOO_MANY_VALUES = `the request body holds more than ${MAX_CHECKED_VALUES} JSON values, more than the mock reads`;

const isJson = (mediaType: string): boolean => /^application\/([\s\S]*\+)?json$/.test(mediaType);

export function formContent(operation: IHttpOperation) {
  return operation.request?.body?.contents?.find(({ mediaType }) => mediaType.toLowerCase() === 'multipart/form-data');
}

const OCTETS = 'application/octet-stream';

const refused = (status: 400 | 413 | 422, message: string) => ({ ok: false, status, message }) as const;

export async function readBody(request: Request, operation: IHttpOperation, reading: BodyReading): Promise<BodyResult> {
  const contentType = request.headers.get('content-type')?.trim() || undefined;
  const bound = (operation.request?.body?.contents ?? []).some((content) => isJson(content.mediaType.toLowerCase()));
  if (bound && contentType === undefined && (request.method === 'POST' || request.method === 'PUT'))
    return refused(422, '[]: Empty Content-Type');
  if (request.body === null) return { ok: true, body: undefined };
  const raw = await readBodyBytes(request, reading);
  if (!raw.ok) return raw;
  const empty = raw.data.length === 0;
  if (contentType === undefined) {
    if (bound) return { ok: true, body: {} };
    return empty ? { ok: true, body: undefined } : { ok: true, body: latin1Text(raw.data), contentType: OCTETS };
  }
  const mime = parseMediaType(contentType);
  const shown = JSON.stringify(contentType.slice(0, 100));
  if (!mime) return refused(422, `[]: Unsupported Content-Type (not a media type: ${shown})`);
  if (isJson(mime.essence) && bound) {
    if (empty) return { ok: true, body: {} };
    const text = strictUtf8(raw.data);
    if (text === undefined) return refused(422, '[]: the request body is not valid UTF-8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return refused(422, `[]: ${error instanceof Error ? error.message : 'malformed JSON'}`);
    }
    const past = pastJsonBounds(body);
    if (past === 'depth') return refused(422, '[]: exceeded max depth');
    if (past === 'values') return refused(413, TOO_MANY_VALUES);
    return { ok: true, body };
  }
  if (empty) return { ok: true, body: undefined };
  const form = readForm(raw.data, mime, operation);
  // Gitea answers 500 (plain text); a 4xx says what is wrong with the request.
  if (typeof form === 'string') return refused(400, form);
  if (form) return { ok: true, body: undefined, form };
  return { ok: true, body: latin1Text(raw.data) };
}

export function readForm(data: Uint8Array, mime: ReturnType<typeof parseMediaType>, operation: IHttpOperation) {
  const multipart = mime?.essence === 'multipart/form-data' && formContent(operation);
  const boundary = multipart ? mime.params.get('boundary') : undefined;
  return boundary ? parseForm(data, boundary) : undefined;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const QUOTED = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
const PARAMETER = /;[\t\n\r ]*([^;=]*)(?:=(?:"((?:[^"\\]|\\[\s\S])*)(\\?)"?[^;]*|([^;]*)))?/y;

/** WHATWG MIME Sniffing's "parse a MIME type", as Node's util.MIMEType, which the browser build cannot import. */
export function parseMediaType(header: string) {
  const input = header.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  const head = /^([^/]*)\/([^;]*)/.exec(input);
  const subtype = head?.[2]?.replace(/[\t\n\r ]+$/, '') ?? '';
  if (!head || !TOKEN.test(head[1]!) || !TOKEN.test(subtype)) return undefined;
  const params = new Map<string, string>();
  for (PARAMETER.lastIndex = head[0].length; PARAMETER.lastIndex < input.length; ) {
    const [, rawName, quoted, backslash, plain] = PARAMETER.exec(input)!;
    const name = rawName!.toLowerCase();
    const value =
      quoted === undefined
        ? plain?.replace(/[\t\n\r ]+$/, '') || undefined
        : quoted.replace(/\\([\s\S])/g, '$1') + backslash;
    if (value !== undefined && TOKEN.test(name) && QUOTED.test(value) && !params.has(name)) params.set(name, value);
  }
  return { essence: `${head[1]}/${subtype}`.toLowerCase(), params };
}

export interface FormPart {
  name: string;
  filename?: string;
  type?: string;
  data: Uint8Array;
}

// Go's GODEBUG multipartmaxparts
const MAX_PARTS = 1000;

// mime/grammar.go
const GO_TOKEN = "[!#-'*+\\-.0-9A-Z^-~]";
const TSPECIAL = '[()<>@,;:\\\\"/[\\]?=]';
const GO_TOKENS = new RegExp(`^${GO_TOKEN}+$`);
const DISPOSITION = new RegExp(`^${GO_TOKEN}+(/${GO_TOKEN}+)?$`);
const DISPOSITION_END = /\s*;?$/y;
// A quoted-string as Go reads it: a backslash escapes only a tspecial (MSIE sends `C:\dir\file` unescaped).
const DISPOSITION_PARAMETER = new RegExp(
  `\\s*;\\s*(${GO_TOKEN}+)\\s*=\\s*(?:"((?:\\\\${TSPECIAL}|\\\\(?!${TSPECIAL})|[^"\\r\\n\\\\])*)"|(${GO_TOKEN}+))`,
  'y',
);
const ESCAPED = new RegExp(`\\\\(${TSPECIAL})`, 'g');

/** Bytes as Go's JSON answers a string: valid UTF-8 as it is, and U+FFFD for each byte of anything else (utf8.DecodeRune). */
function asGoWritesIt(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0;
    const piece = length === 0 ? undefined : strictUtf8(bytes.subarray(i, i + length));
    text += piece ?? '\ufffd';
    i += piece === undefined ? 1 : length;
  }
  return text;
}

/** Go's mime.ParseMediaType, for Content-Disposition: the lower-cased disposition and its parameters (none when they do not parse). */
function parseDisposition(header: string): { disposition: string; params: Map<string, string> } | undefined {
  const base = header.split(';', 1)[0]!;
  const disposition = base.trim().toLowerCase();
  if (!DISPOSITION.test(disposition)) return undefined;
  const params = new Map<string, string>();
  const starred = new Map<string, string>();
  for (let at = base.length; ; at = DISPOSITION_PARAMETER.lastIndex) {
    DISPOSITION_END.lastIndex = at;
    if (DISPOSITION_END.test(header)) break;
    DISPOSITION_PARAMETER.lastIndex = at;
    const [, key, quoted, token] = DISPOSITION_PARAMETER.exec(header) ?? [];
    if (key === undefined) return { disposition, params: new Map() };
    const name = key.toLowerCase();
    const value = quoted?.replace(ESCAPED, '$1') ?? token!;
    const into = name.includes('*') ? starred : params;
    if (into.has(name) && into.get(name) !== value) return undefined;
    into.set(name, value);
  }
  // `filename*=UTF-8''…` wins over `filename=…`; continuations (`filename*0`) are too rare to read.
  for (const [key, value] of starred) {
    if (!/^[^*]*\*$/.test(key)) continue;
    // RFC 2231 `charset'language'percent-encoded`, UTF-8 or US-ASCII only.
    const [charset, , encoded] = value.split("'", 3);
    if (encoded === undefined || !['utf-8', 'us-ascii'].includes(charset!.toLowerCase())) continue;
    if (/%(?![0-9A-Fa-f]{2})/.test(encoded)) continue;
    const bytes = encoded
      .split(/(%[0-9A-Fa-f]{2})/)
      .map((piece) => (piece.startsWith('%') ? Uint8Array.of(parseInt(piece.slice(1), 16)) : utf8Bytes(piece)));
    params.set(key.slice(0, -1), asGoWritesIt(concatBytes(bytes)));
  }
  return { disposition, params };
}

/** A multipart/form-data body as Go's multipart reader (ReadForm) reads it, or why it refuses it. */
function parseForm(raw: Uint8Array, boundary: string): FormPart[] | string {
  const fail = (message: string) => `failed to parse request multipart form: ${message}`;
  const quote = (line: Uint8Array) => JSON.stringify(latin1Text(line.subarray(0, 40)));
  const dash = latin1Bytes(`--${boundary}`);
  const dashDash = latin1Bytes(`--${boundary}--`);
  let nl = latin1Bytes('\r\n');
  const parts: FormPart[] = [];
  let partsRead = 0;
  let pos = 0;
  const nextLine = (): { line: Uint8Array; eof: boolean } => {
    const end = raw.indexOf(0x0a, pos);
    const line = raw.subarray(pos, end < 0 ? raw.length : end + 1);
    pos += line.length;
    return { line, eof: end < 0 };
  };
  const delimits = (line: Uint8Array, prefix: Uint8Array, last: boolean): boolean => {
    if (!bytesAt(line, prefix)) return false;
    let i = prefix.length;
    while (line[i] === 0x20 || line[i] === 0x09) i++;
    // As Go: a first delimiter ending in LF alone switches the whole body to LF line ends.
    if (!last && partsRead === 0 && line.length - i === 1 && line[i] === 0x0a) nl = latin1Bytes('\n');
    return (last && i === line.length) || (line.length - i === nl.length && bytesAt(line, nl, i));
  };
  /** Whether the bytes after a candidate delimiter at `at` make it one (Go's matchAfterPrefix). */
  const endsPart = (at: number): boolean =>
    at >= raw.length || [0x20, 0x09, 0x0d, 0x0a].includes(raw[at]!) || (raw[at] === 0x2d && raw[at + 1] === 0x2d);

  for (;;) {
    let expectNewPart = false;
    for (;;) {
      const { line, eof } = nextLine();
      if (!eof && delimits(line, dash, false)) break;
      if (delimits(line, dashDash, true)) return parts;
      if (eof)
        return fail(partsRead === 0 ? 'no part and no closing boundary' : 'the body ends before its closing boundary');
      if (expectNewPart) return fail(`expected a boundary after a part, got ${quote(line)}`);
      if (partsRead === 0) continue;
      if (line.length !== nl.length || !bytesAt(line, nl)) return fail(`unexpected line after a part: ${quote(line)}`);
      expectNewPart = true;
    }
    if (++partsRead > MAX_PARTS) return fail(`more than ${MAX_PARTS} parts`);

    const headers: [string, string][] = [];
    for (;;) {
      const { line, eof } = nextLine();
      if (eof) return fail('a part header is cut short');
      const text = utf8Text(line).replace(/\r?\n$/, '');
      if (text === '') break;
      if ((text[0] === ' ' || text[0] === '\t') && headers.length > 0) {
        headers[headers.length - 1]![1] += ` ${text.trim()}`;
        continue;
      }
      const colon = text.indexOf(':');
      if (colon < 0 || !GO_TOKENS.test(text.slice(0, colon)))
        return fail(`malformed part header ${JSON.stringify(text.slice(0, 40))}`);
      headers.push([text.slice(0, colon).toLowerCase(), text.slice(colon + 1).trim()]);
    }

    let end = pos;
    if (!bytesAt(raw, dash, pos) || !endsPart(pos + dash.length)) {
      const nlDash = concatBytes([nl, dash]);
      for (let from = pos; ; from = end + nlDash.length) {
        end = indexOfBytes(raw, nlDash, from);
        if (end < 0) return fail('the body ends before its closing boundary');
        if (endsPart(end + nlDash.length)) break;
      }
    }
    const data = raw.slice(pos, end);
    pos = end;

    const header = (name: string): string | undefined => headers.find(([key]) => key === name)?.[1];
    const disposition = parseDisposition(header('content-disposition') ?? '');
    const name = disposition?.disposition === 'form-data' ? disposition.params.get('name') : undefined;
    if (!name) continue;
    // Go's filepath.Base on a Unix server: RFC 7578 says to drop the directories.
    const filename = disposition!.params.get('filename');
    const base = filename?.replace(/\/+$/, '');
    const type = header('content-type');
    parts.push({
      name,
      ...(filename ? { filename: base ? base.slice(base.lastIndexOf('/') + 1) : '/' } : {}),
      ...(type === undefined ? {} : { type }),
      data,
    });
  }
}

const ENCODED = Array.from({ length: 256 }, (_, byte) => {
  const char = String.fromCharCode(byte);
  return /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
});

/** A file part as an empty value: no schema describes its bytes. */
export function formForPrism(parts: readonly FormPart[]): string {
  const encoded = (bytes: Uint8Array): string => bytes.reduce((text, byte) => text + ENCODED[byte], '');
  return parts
    .map((part) => `${encoded(utf8Bytes(part.name))}=${part.filename === undefined ? encoded(part.data) : ''}`)
    .join('&');
}
