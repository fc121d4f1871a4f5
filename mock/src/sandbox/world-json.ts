// A world as JSON: copied for every batch of writes (sharing the strings: nine 1 MiB GPG keys are not
// copied as structuredClone would), its unchanged entries then given back, so that a batch measures, and tells
// other processes, only what it changed; written as text in pieces, letting the event loop turn between.
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

/** Whether `a` and `b` are the same JSON, keys in the same order: the same text. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key !== others[index]) return false;
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

type Json = Record<string, unknown>;

/**
 * Gives `copy` back the top-level fields and list entries of `base` (the world it was copied from) that its writes
 * left as they were, by index, awaiting `pause` after each entry: a world's entries are then the same objects from
 * version to version until a write changes them, and what is known of each (its size) is known once.
 */
export async function keepUnchanged(copy: object, base: object, pause: () => Promise<void>): Promise<void> {
  const now = copy as Json;
  const was = base as Json;
  for (const key of Object.keys(now)) {
    const list = now[key];
    const old = was[key];
    if (!Array.isArray(list) || !Array.isArray(old)) {
      if (key !== '__proto__' && sameJson(list, old)) now[key] = old;
      continue;
    }
    for (let index = 0; index < list.length && index < old.length; index++) {
      if (sameJson(list[index], old[index])) list[index] = old[index];
      await pause();
    }
  }
}

/** Each list entry's size in bytes of JSON, by the entry: an entry of a world is never changed, only replaced. */
const entryBytes = new WeakMap<object, number>();

const textOf = (entry: unknown): string => (JSON.stringify(entry) as string | undefined) ?? 'null';

function bytesOfEntry(entry: unknown): number {
  if (typeof entry !== 'object' || entry === null) return utf8Length(textOf(entry));
  let bytes = entryBytes.get(entry);
  if (bytes === undefined) entryBytes.set(entry, (bytes = utf8Length(textOf(entry))));
  return bytes;
}

/** A world's top-level field as JSON writes it: a list, or any other value as its text (none left out as undefined). */
type Field = { key: string; list: unknown[] } | { key: string; list?: undefined; value: unknown; text: string };

function* fieldsOf(world: object): Generator<Field> {
  for (const [key, value] of Object.entries(world)) {
    if (Array.isArray(value)) yield { key, list: value };
    else {
      const text = JSON.stringify(value) as string | undefined;
      if (text !== undefined) yield { key, value, text };
    }
  }
}

/** `utf8Length(JSON.stringify(world))`, each entry of a list measured once in its life, awaiting `pause` after each list. */
export async function worldBytes(world: object, pause: () => Promise<void>): Promise<number> {
  let bytes = 2;
  let fields = 0;
  for (const field of fieldsOf(world)) {
    let valueBytes: number;
    if (field.list) {
      valueBytes = 2 + Math.max(0, field.list.length - 1);
      for (const entry of field.list) valueBytes += bytesOfEntry(entry);
      await pause();
    } else valueBytes = utf8Length(field.text);
    bytes += (fields++ === 0 ? 0 : 1) + utf8Length(JSON.stringify(field.key)) + 1 + valueBytes;
  }
  return bytes;
}

/** Pieces of text at least this long, so a save writes a few large pieces, not one per record. */
const PIECE = 256 * 1024;

/** `JSON.stringify(world)` in pieces, with `pause` awaited after each entry of a top-level list. */
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
  for (const field of fieldsOf(world)) {
    add(`${fields++ === 0 ? '' : ','}${JSON.stringify(field.key)}:`);
    if (!field.list) {
      add(field.text);
      continue;
    }
    add('[');
    for (const [index, entry] of field.list.entries()) {
      add(`${index === 0 ? '' : ','}${textOf(entry)}`);
      await pause();
    }
    add(']');
  }
  pieces.push(`${piece}}`);
  return pieces;
}

/**
 * What changed from `before` to `after` (made from a copy of it, its unchanged parts given back by `keepUnchanged`) as
 * one JSON text: the fields that are not the same, and for each list that changed its length and its entries that
 * are not the same objects, by index (`[length, [index, entry], …]`), with `bytes`, the size of the world after.
 */
export function worldChange(before: object, after: object, bytes: number): string {
  const was = before as Json;
  const fields: string[] = [];
  const lists: string[] = [];
  for (const field of fieldsOf(after)) {
    const { key } = field;
    if (!field.list) {
      if (field.value !== was[key]) fields.push(`${JSON.stringify(key)}:${field.text}`);
      continue;
    }
    const old = Array.isArray(was[key]) ? (was[key] as unknown[]) : [];
    const set: string[] = [];
    for (let index = 0; index < field.list.length; index++)
      if (field.list[index] !== old[index]) set.push(`[${index},${textOf(field.list[index])}]`);
    if (set.length > 0 || old.length !== field.list.length)
      lists.push(`${JSON.stringify(key)}:[${[field.list.length, ...set].join(',')}]`);
  }
  return `{"bytes":${bytes},"fields":{${fields.join(',')}},"lists":{${lists.join(',')}}}`;
}
