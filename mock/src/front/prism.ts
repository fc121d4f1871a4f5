// Loads Prism's HTTP mocker once, for generated answers only (sources/dynamic.ts; the examples
// and the sandbox need no Prism but its validators, validation.ts), in Node only. Prism requires `@faker-js/faker` with all 60 locales at import
// time (three quarters of a second) to hand it to json-schema-faker, which calls it for the
// document's `x-faker` keywords in dynamic answers. A stand-in in Node's module cache hands over
// the English faker instead, loaded on the first `x-faker` value (json-schema-faker takes the
// stand-in at once, but only touches it then), so start-up stays under a second in every mode.
// It also makes `--seed` cover faker: json-schema-faker draws from its `random` option, which
// Prism seeds for each answer, while faker has a generator of its own that nobody seeds. The
// stand-in's faker draws from json-schema-faker's `random` instead, so the same seed gives the
// same answers, `x-faker` fields included.
import { createRequire } from 'node:module';

type PrismHttp = typeof import('@stoplight/prism-http');
type PrismCore = typeof import('@stoplight/prism-core');
export interface Prism {
  http: PrismHttp;
  core: PrismCore;
}

let loading: Promise<Prism> | undefined;

/** What the stand-in needs of faker 6 (the English instance of `@faker-js/faker/locale/en`). */
interface Faker {
  mersenne: { rand(max?: number, min?: number): number };
}
interface JsonSchemaFaker {
  option(name: 'random'): () => number;
}

/** Makes `exports` what `require(path)` returns in this process, in place of the file's own. */
function putInCache(path: string, exports: unknown): void {
  const require = createRequire(import.meta.url);
  const stub = new (require('node:module') as { new (id: string): NodeJS.Module })(path);
  stub.filename = path;
  stub.loaded = true;
  stub.exports = exports;
  require.cache[path] = stub;
}

function installLazyFaker(): void {
  const require = createRequire(import.meta.url);
  const fromPrism = createRequire(require.resolve('@stoplight/prism-http'));
  const fakerPath = fromPrism.resolve('@faker-js/faker');
  if (require.cache[fakerPath]) return;
  const englishPath = fromPrism.resolve('@faker-js/faker/locale/en');
  const jsfPath = fromPrism.resolve('json-schema-faker');
  let english: Faker | undefined;
  const load = (): Faker => {
    if (english) return english;
    const faker = require(englishPath) as Faker;
    const { JSONSchemaFaker: jsf } = require(jsfPath) as { JSONSchemaFaker: JsonSchemaFaker };
    // Every draw of faker 6 goes through `mersenne.rand` (max exclusive, min inclusive).
    if (typeof faker.mersenne?.rand === 'function') {
      faker.mersenne.rand = (max = 32768, min = 0) => {
        const [low, high] = min > max ? [max, min] : [min, max];
        return Math.floor(jsf.option('random')() * (high - low) + low);
      };
    }
    return (english = faker);
  };
  // json-schema-faker reads `default` once, when Prism registers it, and looks methods up on it
  // only when it meets an `x-faker`: a proxy defers the load until then.
  const lazy = new Proxy({} as Record<PropertyKey, unknown>, {
    get: (_target, key) => Reflect.get(load(), key),
    has: (_target, key) => Reflect.has(load(), key),
  });
  putInCache(fakerPath, { __esModule: true, default: lazy, faker: lazy });
}

/**
 * Modules Prism requires at import time for features the launcher never uses: `postman-collection`
 * (with a faker of its own; reading Postman collections) and `node-fetch` (Prism's own proxy).
 * Loading them is a seventh of the start-up. Their importers only touch them inside functions,
 * so a stand-in that loads the real module on first use defers them to never.
 */
const UNUSED_AT_START = [
  ['@stoplight/http-spec', 'postman-collection'],
  ['@stoplight/prism-http', 'node-fetch'],
] as const;

function deferUnused(): void {
  const require = createRequire(import.meta.url);
  const fromPrism = createRequire(require.resolve('@stoplight/prism-http'));
  for (const [importer, name] of UNUSED_AT_START) {
    const path = createRequire(fromPrism.resolve(importer)).resolve(name);
    if (require.cache[path]) continue;
    let real: object | undefined;
    // The stand-in leaves the cache before the real module loads, so the load is the real one.
    const load = (): object => {
      if (real) return real;
      delete require.cache[path];
      real = require(path) as object;
      return real;
    };
    // A function target, so a module that exports a function (node-fetch) can be called too.
    const lazy = new Proxy(() => {}, {
      get: (_target, key) => Reflect.get(load(), key),
      has: (_target, key) => Reflect.has(load(), key),
      apply: (_target, self, args) => Reflect.apply(load() as (...args: unknown[]) => unknown, self, args),
      construct: (_target, args) => Reflect.construct(load() as new (...args: unknown[]) => object, args),
    });
    putInCache(path, lazy);
  }
}

export function loadPrism(): Promise<Prism> {
  loading ??= (async () => {
    try {
      installLazyFaker();
    } catch {
      // A different faker layout: fall back to Prism's own (slower) import; `x-faker` then works
      // but does not follow `--seed`.
    }
    try {
      deferUnused();
    } catch {
      // A different layout: Prism loads them itself, a little slower.
    }
    const [http, core] = await Promise.all([import('@stoplight/prism-http'), import('@stoplight/prism-core')]);
    return { http, core };
  })();
  return loading;
}
