// Bytes, text, randomness and the one bounded body reader over what every runtime has; Node's Buffer where there is.
import { attempt } from './attempt.js';

/** Node's Buffer, where there is one; read once, so a page cannot add it later by accident. */
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

const encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/** UTF-8 bytes of `text` (a lone surrogate as U+FFFD, as Buffer counts it). */
export const utf8Bytes = (text: string): Uint8Array<ArrayBuffer> => encoder.encode(text);

export const utf8Text = (bytes: Uint8Array): string => utf8Decoder.decode(bytes);

export function utf8Length(text: string, portable = NodeBuffer === undefined): number {
  return portable ? encoder.encode(text).length : NodeBuffer!.byteLength(text, 'utf8');
}

/** Each byte as the code unit of its value (Buffer's `latin1`; TextDecoder's `latin1` is windows-1252). */
export function latin1Text(bytes: Uint8Array, portable = NodeBuffer === undefined): string {
  if (!portable) return NodeBuffer!.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let text = '';
  // In slices: fromCharCode takes its bytes as arguments, and the stack bounds how many.
  for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return text;
}

/** The low byte of each code unit of `text`: the inverse of latin1Text. */
export function latin1Bytes(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The one bounded body reader: to its end or past `limit`, the rest cancelled, or unread (`keep`, `take` refusing). */
export async function readBounded<R>(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  { take, keep = false }: { take?: (bytes: number) => R | undefined; keep?: boolean } = {},
): Promise<{ bytes: Uint8Array<ArrayBuffer>; complete: boolean; refused?: R }> {
  const chunks: Uint8Array[] = [];
  const reader = body?.getReader();
  let size = 0;
  for (;;) {
    const part = reader ? await reader.read() : { done: true as const };
    if (part.done) return { bytes: concatBytes(chunks), complete: true };
    size += part.value.byteLength;
    const refused = size > limit ? undefined : take?.(part.value.byteLength);
    if (refused !== undefined) {
      reader!.releaseLock();
      return { bytes: concatBytes(chunks), complete: false, refused };
    }
    chunks.push(part.value);
    if (size > limit) {
      // Not cancelled on a socket that is to answer: that would end the connection first.
      if (keep) reader!.releaseLock();
      else await reader!.cancel();
      return { bytes: concatBytes(chunks), complete: false };
    }
  }
}

/** Whether `bytes` holds `part` from `at` on. */
export function bytesAt(bytes: Uint8Array, part: Uint8Array, at = 0): boolean {
  return bytes.length - at >= part.length && part.every((byte, i) => bytes[at + i] === byte);
}

export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from = 0, portable = NodeBuffer === undefined) {
  if (!portable)
    return NodeBuffer!.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(needle, from);
  const first = needle[0]!;
  // The first byte by the native search, then the rest compared.
  for (let at = haystack.indexOf(first, from); at >= 0; at = haystack.indexOf(first, at + 1))
    if (bytesAt(haystack, needle, at)) return at;
  return -1;
}

export const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');

/** The UTF-8 text of standard base64 (already checked to be well formed), or undefined when it is not base64. */
export const base64Text = (base64: string): string | undefined => attempt(() => utf8Text(latin1Bytes(atob(base64))));

/** `length` bytes from Web Crypto's generator, which every browser has, secure context or not. */
export const randomBytes = (length: number): Uint8Array<ArrayBuffer> => crypto.getRandomValues(new Uint8Array(length));

/** A random (version 4) UUID: crypto.randomUUID's where there is one (browsers offer it on secure origins only; Node's draws from a pool, a ninth the cost), else made here. */
export function randomUuid(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return hex(bytes).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}
