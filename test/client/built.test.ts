// The client as it ships refuses what its source refuses, with the same error. A bundler or
// minifier may drop a call whose result goes unused if it deems the call pure (it once dropped
// the encodeURIComponent that caught unpaired surrogates), or wrap a dependency as the runtime
// does not (a CommonJS build's default import of openapi-fetch): the package's dist/index.js, its
// dist/index.cjs as `require` loads it, and dist/index.js bundled and minified for the browser as
// the size benchmark and an app's build do it, run the same refusals as src/ and must agree to
// the letter, which a call needs a client made for.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as source from '../../src/index.js';
import { bundleBuiltClient } from '../browser/support/bundle.js';

type Client = typeof source;
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const builds: Record<string, Client> = {};
let dir: string;

beforeAll(async () => {
  builds['dist/index.js'] = (await import(pathToFileURL(BUILT).href)) as Client;
  // The CommonJS build, as `require` in a CommonJS app loads it.
  builds['dist/index.cjs'] = createRequire(import.meta.url)('../../dist/index.cjs') as Client;
  dir = await mkdtemp(join(tmpdir(), 'built-client-'));
  await writeFile(join(dir, 'client.min.mjs'), await bundleBuiltClient({ minify: true }));
  builds['minified browser bundle'] = (await import(pathToFileURL(join(dir, 'client.min.mjs')).href)) as Client;
});

afterAll(() => rm(dir, { recursive: true, force: true }));

/** A fetch that must never be reached: every case is refused before sending. */
const unreachable: typeof fetch = () => Promise.reject(new Error('sent a request that should have been refused'));
const BASE = 'https://gitea.example.org/api/v1';

/** Options createGiteaClient must refuse. */
const REFUSED_OPTIONS: [string, Record<string, unknown>][] = [
  ['a token with a line break', { auth: { token: 'tok\r\nX: 1' } }],
  ['a token with a NUL byte', { auth: { token: 'tok\0more' } }],
  ['a token with a space', { auth: { token: 'tok more' } }],
  ['a non-ASCII token', { auth: { token: 'tök' } }],
  ['an empty token', { auth: { token: '' } }],
  ['a token that is not a string', { auth: { token: 42 } }],
  ['an unpaired surrogate in a token', { auth: { token: 'tok\ud800' } }],
  ['an unpaired surrogate in a password', { auth: { username: 'alice', password: 'pw\udc00' } }],
  ['an unpaired surrogate in a user name', { auth: { username: 'ali\ud800ce', password: 'pw' } }],
  ['a colon in a user name', { auth: { username: 'ali:ce', password: 'pw' } }],
  ['a one-time code with a line break', { auth: { username: 'alice', password: 'pw', otp: '12\n34' } }],
  ['a Sudo user with whitespace', { auth: { token: 'tok', sudo: 'bo b' } }],
  ['an empty auth', { auth: {} }],
  ['a string for auth', { auth: 'tok' }],
  ['a header with a line break', { headers: { 'X-Api-Key': 'key\n' } }],
  ['a header beyond Latin-1', { headers: { 'X-Note': '密' } }],
  ['a header with an unpaired surrogate', { headers: { 'X-Note': '\ud800' } }],
  ['a relative baseUrl', { baseUrl: '/api/v1' }],
  ['an ftp baseUrl', { baseUrl: 'ftp://gitea.example.org/api/v1' }],
  ['a baseUrl with user info', { baseUrl: 'https://u:pw@gitea.example.org/api/v1' }],
  ['a baseUrl with a query', { baseUrl: 'https://gitea.example.org/api/v1?x=1' }],
  ['credentials over plain http', { baseUrl: 'http://gitea.example.org/api/v1', auth: { token: 'tok' } }],
  ['a negative timeoutMs', { timeoutMs: -1 }],
  ['a timeoutMs that is not a number', { timeoutMs: '100' }],
  ['a userAgent with a line break', { userAgent: 'bot\r\nX-Injected: 1' }],
  ['a fetch that is not a function', { fetch: 'https://gitea.example.org' }],
  ['a retry of NaN', { retry: Number.NaN }],
  ['retry methods that are not a list', { retry: { methods: 'POST' } }],
];

/** Calls the client must refuse before sending. */
const REFUSED_CALLS: [string, Record<string, unknown>][] = [
  ['".." as a path parameter', { params: { path: { owner: '..', repo: 'rocket', id: 1 } } }],
  ['an empty path parameter', { params: { path: { owner: 'acme', repo: '', id: 1 } } }],
  ['a missing path parameter', { params: { path: { owner: 'acme', repo: 'rocket' } } }],
  ['no path parameters at all', {}],
  [
    'a per-call timeoutMs of NaN',
    { params: { path: { owner: 'acme', repo: 'rocket', id: 1 } }, timeoutMs: Number.NaN },
  ],
  [
    'a per-call baseUrl with user info',
    { params: { path: { owner: 'acme', repo: 'rocket', id: 1 } }, baseUrl: 'https://u:pw@gitea.example.org/api/v1' },
  ],
];

/** What a refusal looks like: the error's class and message. */
async function refusal(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
  return 'no error';
}

describe.each(['dist/index.js', 'dist/index.cjs', 'minified browser bundle'])(
  '%s refuses what src/ refuses',
  (build) => {
    it.each(REFUSED_OPTIONS)('options with %s', async (_case, options) => {
      const create = (client: Client) => () =>
        client.createGiteaClient({ baseUrl: BASE, fetch: unreachable, ...options } as never);
      const expected = await refusal(create(source));
      expect(expected).toMatch(/^TypeError: /);
      expect(await refusal(create(builds[build]!))).toBe(expected);
    });

    it.each(REFUSED_CALLS)('a call with %s', async (_case, init) => {
      const call = (client: Client) => () =>
        (
          client.createGiteaClient({ baseUrl: BASE, auth: { token: 'tok' }, fetch: unreachable }).GET as (
            path: string,
            init: unknown,
          ) => Promise<unknown>
        )('/repos/{owner}/{repo}/keys/{id}', init);
      const expected = await refusal(call(source));
      expect(expected).toMatch(/^TypeError: /);
      expect(await refusal(call(builds[build]!))).toBe(expected);
    });
  },
);
