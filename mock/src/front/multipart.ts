// multipart/form-data read as Gitea reads it (Go's mime/multipart), refusing what Go refuses; the
// form is its parts from then on, which Prism (whose parser throws on file parts without a type
// and on quoted names) validates as URL-encoded fields.
import { concatBytes, indexOfBytes, latin1Bytes, latin1Text, sameBytes, utf8Bytes, utf8Text } from '../common/bytes.js';

export interface FormPart {
  /** The form-data name, decoded. */
  name: string;
  /** The file name (its last path segment, as Go gives it); undefined for a plain field. */
  filename?: string;
  /** The part's Content-Type, if it had one. */
  type?: string;
  data: Uint8Array;
}

export type FormResult = { ok: true; parts: FormPart[] } | { ok: false; message: string };

/** Go's limit (GODEBUG multipartmaxparts): a body of 10 MB could otherwise hold a million tiny parts. */
const MAX_PARTS = 1000;

const TSPECIALS = new Set('()<>@,;:\\"/[]?=');
const isTokenChar = (c: string): boolean => c > ' ' && c < '\x7f' && !TSPECIALS.has(c);

function consumeToken(v: string): [string, string] {
  let i = 0;
  while (i < v.length && isTokenChar(v[i]!)) i++;
  return [v.slice(0, i), v.slice(i)];
}

/** A quoted-string as Go reads it: a backslash escapes only a tspecial (MSIE sends `C:\dir\file` unescaped). */
function consumeValue(v: string): [string, string] | undefined {
  if (v[0] !== '"') {
    const [token, rest] = consumeToken(v);
    return token === '' ? undefined : [token, rest];
  }
  let value = '';
  for (let i = 1; i < v.length; i++) {
    const c = v[i]!;
    if (c === '"') return [value, v.slice(i + 1)];
    if (c === '\\' && i + 1 < v.length && TSPECIALS.has(v[i + 1]!)) {
      value += v[++i];
      continue;
    }
    if (c === '\r' || c === '\n') return undefined;
    value += c;
  }
  return undefined;
}

/**
 * `charset'language'percent-encoded`, UTF-8 or US-ASCII only, as Go decodes RFC 2231 values: a
 * broken escape drops the value, and bytes that are no UTF-8 are kept as they are (`%ff%fe`).
 */
function decode2231(v: string): string | undefined {
  const [charset, , encoded] = v.split("'", 3);
  if (encoded === undefined || !['utf-8', 'us-ascii'].includes(charset!.toLowerCase())) return undefined;
  if (/%(?![0-9A-Fa-f]{2})/.test(encoded)) return undefined;
  const bytes = encoded
    .split(/(%[0-9A-Fa-f]{2})/)
    .map((piece) => (piece.startsWith('%') ? Uint8Array.of(parseInt(piece.slice(1), 16)) : utf8Bytes(piece)));
  return asGoWritesIt(concatBytes(bytes));
}

/** Bytes as Go's JSON answers a string: valid UTF-8 as it is, and U+FFFD for each byte of anything else. */
function asGoWritesIt(bytes: Uint8Array): string {
  const within = (index: number, low = 0x80, high = 0xbf): boolean =>
    index < bytes.length && bytes[index]! >= low && bytes[index]! <= high;
  /** The length of the UTF-8 sequence at `i` (Go's utf8.DecodeRune), 0 when it is none. */
  const sequence = (i: number): number => {
    const lead = bytes[i]!;
    if (lead < 0x80) return 1;
    if (lead >= 0xc2 && lead <= 0xdf) return within(i + 1) ? 2 : 0;
    if (lead >= 0xe0 && lead <= 0xef) {
      const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
      return within(i + 1, low, high) && within(i + 2) ? 3 : 0;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
      const [low, high] = lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
      return within(i + 1, low, high) && within(i + 2) && within(i + 3) ? 4 : 0;
    }
    return 0;
  };
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const length = sequence(i);
    text += length === 0 ? '\ufffd' : utf8Text(bytes.subarray(i, i + length));
    i += Math.max(length, 1);
  }
  return text;
}

/** Whether `text` is a token, or two joined by a slash, as Go's checkMediaTypeDisposition wants. */
function isMediaType(text: string): boolean {
  const [type, rest] = consumeToken(text);
  if (type === '' || rest === '') return type !== '';
  const [subtype, tail] = rest[0] === '/' ? consumeToken(rest.slice(1)) : ['', rest];
  return subtype !== '' && tail === '';
}

/** Go's mime.ParseMediaType, for Content-Disposition: the lower-cased disposition and its parameters (none when they do not parse). */
function parseDisposition(header: string): { disposition: string; params: Map<string, string> } | undefined {
  const semicolon = header.indexOf(';');
  const base = semicolon < 0 ? header : header.slice(0, semicolon);
  const disposition = base.trim().toLowerCase();
  if (!isMediaType(disposition)) return undefined;
  const params = new Map<string, string>();
  const starred = new Map<string, string>();
  let rest = header.slice(base.length);
  for (;;) {
    rest = rest.trimStart();
    if (rest === '' || rest === ';') break;
    if (rest[0] !== ';') return { disposition, params: new Map() };
    const [key, afterKey] = consumeToken(rest.slice(1).trimStart());
    const afterEquals = afterKey.trimStart();
    const value = key !== '' && afterEquals[0] === '=' ? consumeValue(afterEquals.slice(1).trimStart()) : undefined;
    if (value === undefined) return { disposition, params: new Map() };
    const name = key.toLowerCase();
    const into = name.includes('*') ? starred : params;
    // Go refuses a parameter given twice with different values.
    if (into.has(name) && into.get(name) !== value[0]) return undefined;
    into.set(name, value[0]);
    rest = value[1];
  }
  for (const [key, value] of starred) {
    // `filename*=UTF-8''…` wins over `filename=…`; continuations (`filename*0`) are too rare to read.
    if (!key.endsWith('*') || key.indexOf('*') !== key.length - 1) continue;
    const decoded = decode2231(value);
    if (decoded !== undefined) params.set(key.slice(0, -1), decoded);
  }
  return { disposition, params };
}

/** Go's filepath.Base on a Unix server: the last segment; RFC 7578 says to drop the directories. */
function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

const isBlank = (c: number | undefined): boolean => c === 0x20 || c === 0x09;

/**
 * Reads a multipart/form-data body as Go's multipart reader (ReadForm) does. `boundary` comes from
 * the request's Content-Type.
 */
export function parseForm(raw: Uint8Array, boundary: string): FormResult {
  if (boundary === '') return { ok: false, message: 'the boundary is empty' };
  const dash = latin1Bytes(`--${boundary}`);
  let nl = latin1Bytes('\r\n');
  let nlDash = concatBytes([nl, dash]);
  const parts: FormPart[] = [];
  let partsRead = 0;
  let pos = 0;

  /** The line from `at`, with its end of line, and where the next one starts. */
  const lineAt = (at: number): { line: Uint8Array; next: number; eof: boolean } => {
    const end = raw.indexOf(0x0a, at);
    return end < 0
      ? { line: raw.subarray(at), next: raw.length, eof: true }
      : { line: raw.subarray(at, end + 1), next: end + 1, eof: false };
  };
  /** What follows `--boundary` on its line: blanks, then the end of line (or, for the last, nothing). */
  const restIs = (rest: Uint8Array, allowEnd: boolean): boolean => {
    let i = 0;
    while (isBlank(rest[i])) i++;
    const tail = rest.subarray(i);
    return (allowEnd && tail.length === 0) || sameBytes(tail, nl);
  };
  const isDelimiter = (line: Uint8Array): boolean => {
    if (!sameBytes(line.subarray(0, dash.length), dash)) return false;
    const rest = line.subarray(dash.length);
    let i = 0;
    while (isBlank(rest[i])) i++;
    // As Go: a first delimiter ending in LF alone switches the whole body to LF line ends.
    if (partsRead === 0 && rest.length - i === 1 && rest[i] === 0x0a) {
      nl = latin1Bytes('\n');
      nlDash = concatBytes([nl, dash]);
    }
    return restIs(rest, false);
  };
  const dashDash = concatBytes([dash, latin1Bytes('--')]);
  const isFinal = (line: Uint8Array): boolean =>
    sameBytes(line.subarray(0, dashDash.length), dashDash) && restIs(line.subarray(dashDash.length), true);
  /** Whether the bytes after a candidate delimiter at `at` make it one (Go's matchAfterPrefix). */
  const endsPart = (at: number): boolean => {
    if (at >= raw.length) return true;
    const c = raw[at];
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) return true;
    return c === 0x2d && raw[at + 1] === 0x2d;
  };

  for (;;) {
    // Up to the next delimiter line: a preamble before the first, one line end after each part.
    let expectNewPart = false;
    for (;;) {
      const { line, next, eof } = lineAt(pos);
      pos = next;
      if (!eof && isDelimiter(line)) {
        partsRead++;
        break;
      }
      if (isFinal(line)) return { ok: true, parts };
      if (eof)
        return {
          ok: false,
          message: partsRead === 0 ? 'no part and no closing boundary' : 'the body ends before its closing boundary',
        };
      if (expectNewPart)
        return {
          ok: false,
          message: `expected a boundary after a part, got ${JSON.stringify(latin1Text(line.subarray(0, 40)))}`,
        };
      if (partsRead === 0) continue;
      if (sameBytes(line, nl)) {
        expectNewPart = true;
        continue;
      }
      return {
        ok: false,
        message: `unexpected line after a part: ${JSON.stringify(latin1Text(line.subarray(0, 40)))}`,
      };
    }
    if (partsRead > MAX_PARTS) return { ok: false, message: `more than ${MAX_PARTS} parts` };

    // The part's MIME header, up to an empty line; continuation lines join the one before.
    const headers: [string, string][] = [];
    for (;;) {
      const { line, next, eof } = lineAt(pos);
      if (eof) return { ok: false, message: 'a part header is cut short' };
      pos = next;
      const text = utf8Text(line).replace(/\r?\n$/, '');
      if (text === '') break;
      if ((text[0] === ' ' || text[0] === '\t') && headers.length > 0) {
        headers[headers.length - 1]![1] += ` ${text.trim()}`;
        continue;
      }
      const colon = text.indexOf(':');
      const key = colon < 0 ? '' : text.slice(0, colon);
      if (key === '' || [...key].some((c) => !isTokenChar(c)))
        return { ok: false, message: `malformed part header ${JSON.stringify(text.slice(0, 40))}` };
      headers.push([key.toLowerCase(), text.slice(colon + 1).trim()]);
    }

    // The data, up to a line end and `--boundary` followed by a blank, a line end or `--` (or the body's end).
    let end: number;
    if (sameBytes(raw.subarray(pos, pos + dash.length), dash) && endsPart(pos + dash.length)) end = pos;
    else {
      let from = pos;
      for (;;) {
        const at = indexOfBytes(raw, nlDash, from);
        if (at < 0) return { ok: false, message: 'the body ends before its closing boundary' };
        if (endsPart(at + nlDash.length)) {
          end = at;
          break;
        }
        from = at + nlDash.length;
      }
    }
    const data = raw.subarray(pos, end);
    pos = end;

    const header = (name: string): string | undefined => headers.find(([key]) => key === name)?.[1];
    const disposition = parseDisposition(header('content-disposition') ?? '');
    const name = disposition?.disposition === 'form-data' ? disposition.params.get('name') : undefined;
    if (!name) continue; // Go skips a part without a form-data name
    const filename = disposition!.params.get('filename');
    const type = header('content-type');
    parts.push({
      name,
      ...(filename ? { filename: baseName(filename) } : {}),
      ...(type === undefined ? {} : { type }),
      data: data.slice(),
    });
  }
}

const UNRESERVED = new Uint8Array(256).map((_, byte) => Number(/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte))));
const HEX = latin1Bytes('0123456789ABCDEF');

/** Every byte but the unreserved ones as %XX, so Prism's form reader decodes exactly what was sent. */
function percentEncoded(bytes: Uint8Array): string {
  let length = 0;
  for (const byte of bytes) length += UNRESERVED[byte] ? 1 : 3;
  const out = new Uint8Array(length);
  let at = 0;
  for (const byte of bytes) {
    if (UNRESERVED[byte]) out[at++] = byte;
    else {
      out[at++] = 0x25;
      out[at++] = HEX[byte >> 4]!;
      out[at++] = HEX[byte & 15]!;
    }
  }
  return latin1Text(out);
}

/**
 * The form as Prism validates it: URL-encoded fields. A file part stands as an empty value: its
 * bytes are a file, which no schema of a form field describes, and reading megabytes of them
 * through Prism would only cost time.
 */
export function formForPrism(parts: readonly FormPart[]): string {
  return parts
    .map(
      (part) =>
        `${percentEncoded(utf8Bytes(part.name))}=${part.filename === undefined ? percentEncoded(part.data) : ''}`,
    )
    .join('&');
}
