// Loads Prism's HTTP mocker once. Prism requires `@faker-js/faker` with all 60 locales at
// import time (three quarters of a second) only to offer it to json-schema-faker for `x-faker`
// keywords, which this document does not use. A lazy stand-in in Node's module cache hands over
// the English faker on first use instead, so start-up stays under a second.
import { createRequire } from 'node:module';

type PrismHttp = typeof import('@stoplight/prism-http');
type PrismCore = typeof import('@stoplight/prism-core');
/** Prism's request and response validators, used on their own by the front of every answer source. */
export type PrismValidator = typeof import('@stoplight/prism-http/dist/validator/index.js');
export interface Prism {
  http: PrismHttp;
  core: PrismCore;
  validator: PrismValidator;
}

let loading: Promise<Prism> | undefined;

function installLazyFaker(): void {
  const require = createRequire(import.meta.url);
  const prismHttp = require.resolve('@stoplight/prism-http');
  const fakerPath = createRequire(prismHttp).resolve('@faker-js/faker');
  if (require.cache[fakerPath]) return;
  const englishPath = createRequire(prismHttp).resolve('@faker-js/faker/locale/en');
  let english: unknown;
  const load = (): unknown => (english ??= require(englishPath));
  const stub = new (require('node:module') as { new (id: string): NodeJS.Module })(fakerPath);
  stub.filename = fakerPath;
  stub.loaded = true;
  stub.exports = Object.defineProperties({}, {
    __esModule: { value: true },
    default: { enumerable: true, get: load },
    faker: { enumerable: true, get: load },
  });
  require.cache[fakerPath] = stub;
}

export function loadPrism(): Promise<Prism> {
  loading ??= (async () => {
    try {
      installLazyFaker();
    } catch {
      // A different faker layout: fall back to Prism's own (slower) import.
    }
    const [http, core, validator] = await Promise.all([
      import('@stoplight/prism-http'),
      import('@stoplight/prism-core'),
      // Not in the package's entry; pinned with the package, like the rest of Prism.
      import('@stoplight/prism-http/dist/validator/index.js'),
    ]);
    return { http, core, validator };
  })();
  return loading;
}
