// A world as JSON: copied for every batch of writes (sharing the strings: nine 1 MiB GPG keys are not
// copied as structuredClone would), written as text in pieces, letting the event loop turn between.
import { utf8Length } from '../common/bytes.js';

/** A copy of JSON data: new objects and lists, the same strings. */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  // A loop, not Object.fromEntries: every write copies its world, and this is twice as fast.
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copyJson((value as Record<string, unknown>)[key]);
    // A key a request sent (a hook's config) may be "__proto__": a field, never the prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}

export const textBytes = (pieces: readonly string[]) => pieces.reduce((bytes, piece) => bytes + utf8Length(piece), 0);

/** Pieces of text at least this long, so a save writes a few large pieces, not one per record. */
const PIECE = 256 * 1024;

/** `JSON.stringify(world)` in pieces, each record of a top-level list on its own and `pause` awaited between them. */
export async function worldText(world: object, pause: () => Promise<void>): Promise<string[]> {
  const pieces: string[] = [];
  let piece = '{';
  const add = (text: string): void => {
    piece += text;
    if (piece.length >= PIECE) {
      pieces.push(piece);
      piece = '';
    }
  };
  let fields = 0;
  for (const [key, value] of Object.entries(world)) {
    const text = Array.isArray(value) ? '[' : (JSON.stringify(value) as string | undefined);
    if (text !== undefined) add(`${fields++ === 0 ? '' : ','}${JSON.stringify(key)}:${text}`);
    if (!Array.isArray(value)) continue;
    for (let index = 0; index < value.length; index++) {
      add(`${index === 0 ? '' : ','}${(JSON.stringify(value[index]) as string | undefined) ?? 'null'}`);
      await pause();
    }
    add(']');
  }
  pieces.push(`${piece}}`);
  return pieces;
}
