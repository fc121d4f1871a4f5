// A world as JSON, at a cost that follows its records rather than its bytes: the sandbox copies a
// world for every batch of writes, measures it against its budget and, with a state folder, saves
// it. Strings are immutable, so a copy shares them: copying a world of nine 1 MiB GPG keys is
// copying a few hundred objects, where structuredClone copied the 18 MiB of text. Its size is
// counted without writing its JSON, with the lengths of long strings remembered from the last
// count. Its text is written in pieces, letting the event loop turn between them.
import { utf8Length } from '../bytes.js';

/** A copy of JSON data: new objects and lists, the same strings. */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
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

/** Strings this long have their JSON length remembered between counts (GPG keys, bodies, descriptions). */
const LONG = 1024;

/** Counts the UTF-8 bytes of `JSON.stringify(value)` without making it. */
export type JsonSizer = (value: unknown) => number;

/** A sizer for one world: it remembers the lengths of the long strings of its last count. */
export function createJsonSizer(): JsonSizer {
  // The long strings of the last count only: a string the world no longer holds is let go.
  let known = new Map<string, number>();
  return (value) => {
    const seen = new Map<string, number>();
    const textBytes = (text: string): number => {
      if (text.length < LONG) return utf8Length(JSON.stringify(text));
      let bytes = seen.get(text) ?? known.get(text);
      if (bytes === undefined) bytes = utf8Length(JSON.stringify(text));
      seen.set(text, bytes);
      return bytes;
    };
    const size = (item: unknown): number | undefined => {
      switch (typeof item) {
        case 'string':
          return textBytes(item);
        case 'number':
          return Number.isFinite(item) ? String(item).length : 4;
        case 'boolean':
          return item ? 4 : 5;
        case 'object': {
          if (item === null) return 4;
          if (Array.isArray(item)) {
            let bytes = 1 + Math.max(item.length, 1);
            for (const entry of item) bytes += size(entry) ?? 4;
            return bytes;
          }
          let bytes = 1;
          let fields = 0;
          for (const key of Object.keys(item)) {
            const field = size((item as Record<string, unknown>)[key]);
            if (field === undefined) continue;
            bytes += textBytes(key) + 1 + field;
            fields++;
          }
          return bytes + Math.max(fields, 1);
        }
        // undefined, functions and symbols: left out of objects, null in lists, as JSON.stringify does.
        default:
          return undefined;
      }
    };
    const bytes = size(value) ?? 0;
    known = seen;
    return bytes;
  };
}

/** Pieces of text at least this long, so a save writes a few large pieces, not one per record. */
const PIECE = 256 * 1024;

/**
 * `JSON.stringify(world)` in pieces: each record of a top-level list is stringified on its own,
 * and `pause` is awaited between them, so no single step takes longer than the largest record.
 */
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
  for (const key of Object.keys(world)) {
    const value = (world as Record<string, unknown>)[key];
    if (!Array.isArray(value)) {
      const text = JSON.stringify(value) as string | undefined;
      if (text !== undefined) add(`${fields++ === 0 ? '' : ','}${JSON.stringify(key)}:${text}`);
      continue;
    }
    add(`${fields++ === 0 ? '' : ','}${JSON.stringify(key)}:[`);
    for (let index = 0; index < value.length; index++) {
      add(`${index === 0 ? '' : ','}${(JSON.stringify(value[index]) as string | undefined) ?? 'null'}`);
      await pause();
    }
    add(']');
  }
  pieces.push(`${piece}}`);
  return pieces;
}
