// The sandbox's limits on what it keeps: a world's budget in bytes of JSON, and the longest string,
// most keys and items a request may have it store; they bound the worlds' memory and a save's time.
import { utf8Length, utf8Text } from '../common/bytes.js';
import type { FormPart } from '../front/body.js';

/** Longest string the sandbox stores from a request. */
const MAX_STRING_BYTES = 1024 * 1024;
/** Most keys of an object, and items of a list, the sandbox stores from a request. */
const MAX_KEYS = 64;
const MAX_ITEMS = 100;

const MiB = 1024 * 1024;
const DEFAULT_WORLD_BYTES = 16 * MiB;
/** Largest world budget: a world is one JSON string, and V8's strings end at 512 MiB. */
const MAX_WORLD_BYTES = 256 * MiB;

/**
 * A world's budget: the worlds together may take half of V8's heap (a byte of JSON is about a byte
 * of heap), the writes in progress an eighth (inFlightBudget), the deliveries an eighth
 * (deliveriesBudget), the rest left to Prism, requests and answers. Without `--max-world-bytes`, 16
 * MiB or a world's share of that half; a budget given that breaks it is refused. Where the runtime
 * does not tell its heap (a browser), 16 MiB or the budget given.
 */
export function worldBudget(
  maxWorlds: number,
  maxWorldBytes: number | undefined,
  heapLimit: number | undefined,
): number {
  const half = heapLimit === undefined ? Infinity : Math.floor(heapLimit / 2);
  if (maxWorldBytes === undefined) return Math.min(DEFAULT_WORLD_BYTES, Math.floor(half / maxWorlds));
  if (maxWorldBytes > MAX_WORLD_BYTES)
    throw new Error(`--max-world-bytes ${maxWorldBytes} is more than the ${MAX_WORLD_BYTES} a world can be`);
  if (maxWorlds * maxWorldBytes > half) {
    throw new Error(
      `--max-worlds ${maxWorlds} of --max-world-bytes ${maxWorldBytes} could take ${Math.ceil((maxWorlds * maxWorldBytes) / MiB)} MiB, more than half of this Node's heap (${Math.floor(half / MiB)} MiB of ${Math.floor((2 * half) / MiB)}): lower either, or give Node more with --max-old-space-size`,
    );
  }
  return maxWorldBytes;
}

/**
 * The bytes the batches of writes in progress may hold at once, across worlds: an eighth of the
 * heap. A batch counts twice its world (its copy, and its text while saved); one past the bound
 * waits for others, in arrival order, and one batch always runs, so 100 worlds of 2 MiB written at
 * once do not hold 100 copies and texts.
 */
export function inFlightBudget(heapLimit: number | undefined): number {
  return heapLimit === undefined ? Infinity : Math.floor(heapLimit / 8);
}

/** The bytes the webhook deliveries may hold, across worlds: an eighth of the heap, half for the logs and half for those waiting or under way. */
export function deliveriesBudget(heapLimit: number | undefined): number {
  return heapLimit === undefined ? Infinity : Math.floor(heapLimit / 8);
}

/** Where a request's body, or its form, holds more than the sandbox stores, said in a sentence; undefined when it does not. */
export function oversized(body: unknown, form?: readonly FormPart[]): string | undefined {
  const name = (key: string): string => (key.length <= 40 ? key : `${key.slice(0, 40)}…`);
  // A stack, not recursion: the depth of a body is the sender's choice.
  const stack: [unknown, string][] = [];
  if (form) for (const part of form) stack.push([part.filename ?? utf8Text(part.data), `body.${name(part.name)}`]);
  else stack.push([body, 'body']);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, where] = next;
    if (typeof value === 'string') {
      const bytes = utf8Length(value);
      if (bytes > MAX_STRING_BYTES)
        return `${where} is ${bytes} bytes long, more than the ${MAX_STRING_BYTES} the sandbox keeps of one text`;
    } else if (Array.isArray(value)) {
      if (value.length > MAX_ITEMS)
        return `${where} holds ${value.length} items, more than the ${MAX_ITEMS} the sandbox keeps of one list`;
      for (const [index, item] of value.entries()) stack.push([item, `${where}[${index}]`]);
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      if (keys.length > MAX_KEYS)
        return `${where} holds ${keys.length} keys, more than the ${MAX_KEYS} the sandbox keeps of one object`;
      for (const key of keys)
        stack.push([key, `a key of ${where}`], [(value as Record<string, unknown>)[key], `${where}.${name(key)}`]);
    }
  }
  return undefined;
}
