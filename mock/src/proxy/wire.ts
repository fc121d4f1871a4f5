// What the proxy reads and puts on the wire: bodies read up to a limit (the rest left to stream),
// headers as they came (raw names, order, duplicates and bytes) less the connection-level ones, a
// request body framed the way the client framed it, and nothing Node would refuse to write.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { Refusal } from '../common/refusal.js';
import type { BodyReading } from '../front/body.js';

/** A refusal that frees itself as other requests end (the budget of request bodies): answered with `Retry-After`. */
export class Busy extends Refusal {}

/** The end of an exchange before its time: the first reason wins, and each waiter hears it once. */
export class Halt {
  reason: Error | undefined;
  readonly #waiters = new Set<(reason: Error) => void>();
  /** Calls `waiter` on the halt; the function returned stops waiting. */
  on(waiter: (reason: Error) => void): () => void {
    this.#waiters.add(waiter);
    return () => void this.#waiters.delete(waiter);
  }
  halt(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    for (const waiter of this.#waiters) waiter(reason);
    this.#waiters.clear();
  }
}

export interface Collected {
  chunks: Buffer[];
  /** False when the body was larger than the limit: the rest is still in the stream, paused. */
  complete: boolean;
}

/**
 * Reads a body up to `limit` bytes; past it, pauses and leaves the rest to be piped. A request's
 * body takes its bytes from the server's budget (`reading`) as they arrive: past it, the stream
 * is paused and the refusal thrown. Rejects when `halt` halts.
 */
export function collect(stream: Readable, limit: number, halt: Halt, reading?: BodyReading): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (): void => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      stopWaiting();
    };
    const done = (complete: boolean): void => {
      settle();
      resolve({ chunks, complete });
    };
    const onError = (error: Error): void => {
      settle();
      reject(halt.reason ?? error);
    };
    const onData = (chunk: Buffer): void => {
      const refusal = reading?.take(chunk.length);
      if (refusal) {
        stream.pause();
        settle();
        reject(new (refusal.status === 503 ? Busy : Refusal)(refusal.status, refusal.message));
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        done(false);
      }
    };
    const onEnd = (): void => done(true);
    if (halt.reason) return reject(halt.reason);
    const stopWaiting = halt.on(onError);
    stream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

type Decoder = (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>;

/** The content codings an answer is decoded from before it is checked: gzip is Gitea's, the others Node's fetch asks for too. */
const DECODERS: Record<string, Decoder> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress) as Decoder,
};

/**
 * An answer's body as text, decoded from its `Content-Encoding` (in the order applied) to at most
 * `limit` bytes, so that a small answer that inflates without end costs `limit` at most. Undefined
 * for a coding it does not know, a body that does not decode, or one past `limit`: such a body
 * goes unchecked, as one too large does.
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
const HOP_BY_HOP = new Set(
  'connection keep-alive proxy-authenticate proxy-authorization proxy-connection te trailer transfer-encoding upgrade'.split(
    ' ',
  ),
);

/**
 * `raw` (name, value, name, value … as Node's `rawHeaders`) without the hop-by-hop headers, those
 * the `Connection` header names, and those `drop` picks (given lower-cased names).
 */
export function endToEnd(raw: readonly string[], drop: (name: string) => boolean): string[] {
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

/** Why Node would refuse to write these headers (as `writeHead` checks), or undefined; names the header, never its value (a credential). */
export function headersProblem(raw: readonly string[]): string | undefined {
  const quoted = (name: string): string => JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
  for (let i = 0; i < raw.length; i += 2) {
    try {
      validateHeaderName(raw[i]!);
    } catch {
      return `the header name ${quoted(raw[i]!)} is not an HTTP token`;
    }
    try {
      validateHeaderValue(raw[i]!, raw[i + 1]!);
    } catch {
      return `the header ${quoted(raw[i]!)} holds a character HTTP does not allow`;
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
 * The framing header a forwarded request needs: a `Content-Length` travels among the end-to-end
 * headers already; a chunked body gets `Transfer-Encoding: chunked` set explicitly, as Node's
 * client frames no body of a GET, HEAD, DELETE or OPTIONS by itself and would write it raw, where
 * the upstream reads it as a second request. Any other transfer coding cannot be forwarded as the
 * client meant: the answer is a refusal, as a string.
 */
export function requestFraming(transferEncoding: string | undefined): string[] | string {
  if (transferEncoding === undefined) return [];
  if (transferEncoding.trim().toLowerCase() !== 'chunked')
    return `the request's Transfer-Encoding is ${JSON.stringify(transferEncoding.slice(0, 40))}: the proxy forwards chunked alone or a Content-Length, so that the upstream reads the body as it was sent`;
  return ['Transfer-Encoding', 'chunked'];
}
