// V8's heap limit, which bounds the sandbox's worlds together (sandbox-limits.ts): Node only.
import { getHeapStatistics } from 'node:v8';

export const heapLimit = (): number => getHeapStatistics().heap_size_limit;
