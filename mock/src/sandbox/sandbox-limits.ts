// The sandbox's limits on what it keeps, which bound the worlds' memory and a save's time: a world's
// budget in bytes of JSON, and the longest string, most keys and items it stores from a request.
import { utf8Length, utf8Text } from '../common/bytes.js';
import type { FormPart } from '../front/body.js';

const MiB = 1024 * 1024;
const MAX_STRING_BYTES = MiB;
const MAX_KEYS = 64;
const MAX_ITEMS = 100;
const DEFAULT_WORLD_BYTES = 16 * MiB;
/** Largest world budget: a world is one JSON string, and V8's strings end at 512 MiB. */
const MAX_WORLD_BYTES = 256 * MiB;

// A world's budget: the worlds may take half of V8's heap together (a byte of JSON is about a byte of heap), the writes
// in progress and the deliveries an eighth each (inFlightBudget). Without one given, 16 MiB or a world's share of that
// half; one given that breaks it or cannot hold the seed is refused.
export function worldBudget(maxWorlds: number, given: number | undefined, heap: number | undefined, seedBytes: number) {
  const half = heap === undefined ? Infinity : Math.floor(heap / 2);
  if (given === undefined) {
    const budget = Math.min(DEFAULT_WORLD_BYTES, Math.floor(half / maxWorlds));
    if (budget >= seedBytes) return budget;
    throw new Error(
      `--max-worlds ${maxWorlds} is too many: that many worlds of the seed's ${seedBytes} bytes could take more than half of this Node's heap`,
    );
  }
  if (given > MAX_WORLD_BYTES)
    throw new Error(`--max-world-bytes ${given} is more than the ${MAX_WORLD_BYTES} a world can be`);
  if (maxWorlds * given > half) {
    throw new Error(
      `--max-worlds ${maxWorlds} of --max-world-bytes ${given} could take ${Math.ceil((maxWorlds * given) / MiB)} MiB, more than half of this Node's heap (${Math.floor(half / MiB)} MiB of ${Math.floor((2 * half) / MiB)}): lower either, or give Node more with --max-old-space-size`,
    );
  }
  if (given < seedBytes) throw new Error(`--max-world-bytes ${given} cannot hold the seed world (${seedBytes} bytes)`);
  return given;
}

/** The bytes the batches of writes in progress may hold across worlds, and the webhook deliveries (half logged, half under way): an eighth of the heap each. */
export function inFlightBudget(heapLimit: number | undefined): number {
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
