// A world as JSON: copied for every batch of writes (sharing the strings: nine 1 MiB GPG keys are not
// copied as structuredClone would), written as text in pieces, letting the event loop turn between, and by part.
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

/**
 * A world's JSON by part: each top-level field's that is not a list, and each entry's of each list. A shared store
 * keeps them beside the world, so a save sends other processes only the parts that changed (`worldChange`).
 */
export interface WorldParts {
  /** Maps, not objects: a key may be "__proto__". */
  fields: Map<string, string>;
  lists: Map<string, string[]>;
}

/** The JSON of each part of `world`, yielding after each entry of a list. */
function* partsOf(
  world: object,
  parts: WorldParts = { fields: new Map(), lists: new Map() },
): Generator<void, WorldParts> {
  for (const [key, value] of Object.entries(world)) {
    if (!Array.isArray(value)) {
      const text = JSON.stringify(value) as string | undefined;
      if (text !== undefined) parts.fields.set(key, text);
      continue;
    }
    const texts: string[] = [];
    parts.lists.set(key, texts);
    for (const entry of value) {
      texts.push((JSON.stringify(entry) as string | undefined) ?? 'null');
      yield;
    }
  }
  return parts;
}

/** The parts of a world at once (one read whole from a store, whose next change they are compared with). */
export function worldParts(world: object): WorldParts {
  const walk = partsOf(world);
  for (let step = walk.next(); ; step = walk.next()) if (step.done) return step.value;
}

/** `JSON.stringify(world)` in pieces, and its parts, with `pause` awaited after each entry of a top-level list. */
export async function worldText(
  world: object,
  pause: () => Promise<void>,
): Promise<{ pieces: string[]; parts: WorldParts }> {
  const walk = partsOf(world);
  let step = walk.next();
  for (; !step.done; step = walk.next()) await pause();
  const parts = step.value;
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
  // In the world's own order of keys, as JSON.stringify writes them.
  for (const key of Object.keys(world)) {
    const texts = parts.lists.get(key);
    const text = parts.fields.get(key);
    if (texts === undefined && text === undefined) continue;
    add(`${fields++ === 0 ? '' : ','}${JSON.stringify(key)}:`);
    if (texts === undefined) add(text!);
    else {
      add('[');
      for (let index = 0; index < texts.length; index++) add(`${index === 0 ? '' : ','}${texts[index]}`);
      add(']');
    }
  }
  pieces.push(`${piece}}`);
  return { pieces, parts };
}

/**
 * What changed from `before` to `after` as one JSON text: the fields whose JSON differs, and for each list that
 * changed its length and its entries that differ, by index (`[length, [index, entry], …]`), with `bytes`, the size
 * of the world after. Entries are compared as text: a world is copied for every write, so no object stays the same.
 */
export function worldChange(before: WorldParts, after: WorldParts, bytes: number): string {
  const fields: string[] = [];
  for (const [key, text] of after.fields)
    if (before.fields.get(key) !== text) fields.push(`${JSON.stringify(key)}:${text}`);
  const lists: string[] = [];
  for (const [key, texts] of after.lists) {
    const old = before.lists.get(key) ?? [];
    const set: string[] = [];
    for (let index = 0; index < texts.length; index++)
      if (old[index] !== texts[index]) set.push(`[${index},${texts[index]}]`);
    if (set.length > 0 || old.length !== texts.length)
      lists.push(`${JSON.stringify(key)}:[${[texts.length, ...set].join(',')}]`);
  }
  return `{"bytes":${bytes},"fields":{${fields.join(',')}},"lists":{${lists.join(',')}}}`;
}
