// What the proxy puts on the wire, in both directions: headers as they came (raw names, order,
// duplicates and bytes), less the connection-level ones; a request body framed the way the
// client framed it; and nothing Node would refuse to write, found before it is written.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';

type Decoder = (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>;

/** The content codings an answer is decoded from before it is checked: gzip is Gitea's, the others Node's fetch asks for too. */
const DECODERS: Record<string, Decoder> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress) as Decoder,
};

/**
 * An answer's body as text, decoded from its `Content-Encoding` (gzip, deflate, br, in the order
 * applied) to at most `limit` bytes, so that a small compressed answer that inflates without end
 * costs `limit` at most. Undefined for a coding it does not know, a body that does not decode, or
 * one that decodes past `limit`: such a body goes unchecked, as one too large does.
 */
export async function decodedBody(
  bytes: Buffer,
  encoding: string | undefined,
  limit: number,
): Promise<string | undefined> {
  const codings = (encoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let body = bytes;
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (!decode) return undefined;
    try {
      body = await decode(body, { maxOutputLength: limit });
    } catch {
      return undefined;
    }
  }
  return body.toString('utf8');
}

/** Connection-level headers, which a proxy never passes on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * `raw` (name, value, name, value … as Node's `rawHeaders`) without the hop-by-hop headers, those
 * the `Connection` header names, and those `drop` picks (given lower-cased names).
 */
export function endToEnd(raw: readonly string[], drop: (name: string) => boolean = () => false): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection')
      for (const option of raw[i + 1]!.split(',')) named.add(option.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name) && !drop(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

/** A header name, quoted and cut short, for a message: it came from a peer. */
function quoteName(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}

/**
 * Why Node would refuse to write these headers (the checks `writeHead` makes), or undefined. Names
 * the header, never its value: values carry credentials.
 */
export function headersProblem(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    try {
      validateHeaderName(raw[i]!);
    } catch {
      return `the header name ${quoteName(raw[i]!)} is not an HTTP token`;
    }
    try {
      validateHeaderValue(raw[i]!, raw[i + 1]!);
    } catch {
      return `the header ${quoteName(raw[i]!)} holds a character HTTP does not allow`;
    }
  }
  return undefined;
}

/** Why Node would refuse to write this status line, or undefined. */
export function statusProblem(status: number | undefined, reason: string | undefined): string | undefined {
  if (status === undefined || status < 100 || status > 999)
    return `the status ${status ?? '(none)'} is not a three-digit code`;
  try {
    // A reason phrase takes the characters of a header value (Node checks both alike).
    validateHeaderValue('status', reason ?? '');
  } catch {
    return 'the reason phrase holds a character HTTP does not allow';
  }
  return undefined;
}

/**
 * The framing header a forwarded request needs, from the request as Node parsed it: a
 * `Content-Length` travels among the end-to-end headers already; a chunked body gets
 * `Transfer-Encoding: chunked` set explicitly, as Node's client frames no body of a GET, HEAD,
 * DELETE or OPTIONS by itself and would write it raw, where the upstream reads it as a second
 * request. Any other transfer coding (`gzip, chunked`) cannot be forwarded as the client meant:
 * the answer is a refusal, as a string.
 */
export function requestFraming(transferEncoding: string | undefined): string[] | string {
  if (transferEncoding === undefined) return [];
  if (transferEncoding.trim().toLowerCase() !== 'chunked') {
    return `the request's Transfer-Encoding is ${JSON.stringify(transferEncoding.slice(0, 40))}: the proxy forwards chunked alone or a Content-Length, so that the upstream reads the body as it was sent`;
  }
  return ['Transfer-Encoding', 'chunked'];
}
