// A V8 context that holds what a page's script sees and nothing of Node's: the language's own
// globals (a fresh context's), the web platform APIs that Node implements too (fetch, Request,
// URL, TextEncoder, Web Crypto, timers, …), passed in from this process, and Web Storage. No
// `process`, `Buffer`, `global`, `setImmediate` or `require`: code that reaches for one of them
// throws a ReferenceError here, as it does in a browser.
import { createContext, runInContext, type Context } from 'node:vm';

/** The web platform's globals that Node offers too: what a page or a service worker may rely on. */
export const WEB_GLOBALS = [
  'AbortController',
  'AbortSignal',
  'Blob',
  'BroadcastChannel',
  'ByteLengthQueuingStrategy',
  'CompressionStream',
  'CountQueuingStrategy',
  'Crypto',
  'CryptoKey',
  'CustomEvent',
  'DOMException',
  'DecompressionStream',
  'Event',
  'EventTarget',
  'File',
  'FormData',
  'Headers',
  'MessageChannel',
  'MessageEvent',
  'MessagePort',
  'Performance',
  'PerformanceEntry',
  'PerformanceMark',
  'PerformanceMeasure',
  'PerformanceObserver',
  'PerformanceObserverEntryList',
  'PerformanceResourceTiming',
  'ReadableByteStreamController',
  'ReadableStream',
  'ReadableStreamBYOBReader',
  'ReadableStreamBYOBRequest',
  'ReadableStreamDefaultController',
  'ReadableStreamDefaultReader',
  'Request',
  'Response',
  'SubtleCrypto',
  'TextDecoder',
  'TextDecoderStream',
  'TextEncoder',
  'TextEncoderStream',
  'TransformStream',
  'TransformStreamDefaultController',
  'URL',
  'URLSearchParams',
  'WritableStream',
  'WritableStreamDefaultController',
  'WritableStreamDefaultWriter',
  'atob',
  'btoa',
  'clearInterval',
  'clearTimeout',
  'crypto',
  'fetch',
  'performance',
  'queueMicrotask',
  'setInterval',
  'setTimeout',
  'structuredClone',
] as const;

/** Web Storage, which every page has and Node 20 lacks: msw keeps its cookies in `localStorage`. */
class MemoryStorage {
  readonly #items = new Map<string, string>();
  get length(): number {
    return this.#items.size;
  }
  key(index: number): string | null {
    return [...this.#items.keys()][index] ?? null;
  }
  getItem(key: string): string | null {
    return this.#items.get(String(key)) ?? null;
  }
  setItem(key: string, value: string): void {
    this.#items.set(String(key), String(value));
  }
  removeItem(key: string): void {
    this.#items.delete(String(key));
  }
  clear(): void {
    this.#items.clear();
  }
}

/** A fresh context with the web globals; what it defines at its top level is read back from it. */
export function webContext(): Context {
  const globals: Record<string, unknown> = { localStorage: new MemoryStorage() };
  for (const name of WEB_GLOBALS) globals[name] = (globalThis as Record<string, unknown>)[name];
  return createContext(globals, { name: 'web context' });
}

/** Runs a classic script (an IIFE bundle, say) in `context`; it throws what the script throws. */
export function runScript(context: Context, code: string, filename: string): void {
  runInContext(code, context, { filename });
}
