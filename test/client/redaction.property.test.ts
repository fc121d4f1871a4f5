// Property: whatever credentials a caller passes (control characters, Unicode, header-breaking
// bytes, values the server echoes back) and whatever goes wrong (an answer echoing the request,
// lower-cased or JSON-escaped as Go escapes it, a server error, a reset, a stall, a middleware or
// helper that throws), no rendering of any error that leaves the client holds a secret in any
// case: thrown, or returned as `{ error }` in the default mode. Every client entry point,
// middleware on and off, real HTTP on loopback. Seeded: FC_SEED replays another seed; a failure
// prints seed and path.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  collectAll,
  createGiteaClient,
  markNotificationThread,
  renderMarkdown,
  TimeoutError,
  unwrap,
  uploadReleaseAttachment,
  type GiteaClient,
} from '../../src/index.js';
import { redact } from '../../src/redact.js';
import { expectNoSecret, goJsonEscaped } from '../support/renderings.js';

const SEED = Number(process.env.FC_SEED ?? 20261123);
const RUNS = 240;

const MODES = [
  'echo 401',
  'echo 401 lower-cased',
  'echo 500 text',
  'echo 500 Go JSON as text',
  'echo 200 broken JSON',
  'list with a bad next link',
  'reset',
  'stall',
] as const;
type Mode = (typeof MODES)[number];

/** Everything a request carried that could be secret, echoed back in body, headers and status text. */
function echoOf(req: IncomingMessage, body: Buffer): string {
  const { authorization = '', 'x-gitea-otp': otp = '', 'x-api-key': key = '' } = req.headers;
  return `echo authorization=${String(authorization)} otp=${String(otp)} key=${String(key)} body=${body.toString('latin1').slice(0, 200)}`;
}

let mode: Mode = 'echo 401';
let baseUrl: string;
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const echo = echoOf(req, Buffer.concat(chunks));
    const authorization = String(req.headers.authorization ?? 'none');
    switch (mode) {
      case 'echo 401':
        res.writeHead(401, `Denied ${authorization}`, {
          'content-type': 'application/json;charset=utf-8',
          'x-echo': authorization,
        });
        res.end(
          JSON.stringify({
            message: echo,
            url: `${baseUrl}/swagger?token=${encodeURIComponent(authorization)}`,
            echo: { [authorization]: echo },
          }),
        );
        return;
      case 'echo 401 lower-cased': {
        // An upstream that lower-cases what it echoes: base64 lower-cased is cheaply recovered.
        const lower = authorization.toLowerCase();
        res.writeHead(401, `Denied ${lower}`, { 'content-type': 'application/json;charset=utf-8', 'x-echo': lower });
        res.end(
          JSON.stringify({
            message: echo,
            url: `${baseUrl}/swagger?token=${encodeURIComponent(authorization)}`,
          }).toLowerCase(),
        );
        return;
      }
      case 'echo 500 Go JSON as text':
        // Go's encoding/json writes &, <, >, U+2028 and U+2029 as \u escapes; quoted in a text that
        // is not JSON as a whole, the body stays text and no parser unescapes them.
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`upstream answered {"message":"${goJsonEscaped(echo)}"}`);
        return;
      case 'echo 500 text':
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'x-echo': authorization });
        res.end(echo);
        return;
      case 'echo 200 broken JSON':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${authorization} ${echo}`);
        return;
      case 'list with a bad next link':
        res.writeHead(200, {
          'content-type': 'application/json',
          link: `<http://[${authorization}/api/v1/admin/orgs?page=2>; rel="next"`,
        });
        res.end('[{"id":1001,"name":"acme"}]');
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall':
        return;
    }
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const keyPath = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } } as const;
type Call = (client: GiteaClient, throwing: boolean, returned: boolean) => Promise<unknown>;
/**
 * A typed call of each method: as it comes when the client throws by itself; otherwise through
 * unwrap, or (`returned`) the result whose `error` is checked as it is returned.
 */
const viaMethod =
  (call: (client: GiteaClient) => Promise<{ data?: unknown; error?: unknown; response: Response }>): Call =>
  (client, throwing, returned) =>
    throwing || returned ? call(client) : unwrap(call(client));
const untyped = (method: string): Call =>
  viaMethod((client) =>
    (client as unknown as Record<string, (path: string) => Promise<{ response: Response }>>)[method]!('/admin/orgs'),
  );

const ENTRY_POINTS: Record<string, Call> = {
  GET: viaMethod((client) => client.GET('/repos/{owner}/{repo}/keys/{id}', keyPath)),
  PUT: viaMethod((client) =>
    client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
      params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
      body: { permission: 'read' },
    }),
  ),
  POST: viaMethod((client) =>
    client.POST('/repos/migrate', { body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'launchpad' } }),
  ),
  DELETE: viaMethod((client) =>
    client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
      params: { path: { owner: 'acme', repo: 'rocket', index: 42 } },
      body: { assignees: ['bob'] },
    }),
  ),
  PATCH: viaMethod((client) =>
    client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } },
      body: { active: false },
    }),
  ),
  HEAD: untyped('HEAD'),
  OPTIONS: untyped('OPTIONS'),
  TRACE: untyped('TRACE'),
  collectAll: (client) => collectAll(client, '/admin/orgs', { params: { query: { limit: 1 } } }, { maxPages: 3 }),
  uploadReleaseAttachment: (client) =>
    uploadReleaseAttachment(client, {
      owner: 'acme',
      repo: 'rocket',
      id: 14001,
      file: new Blob(['build output']),
      name: 'rocket.tar.gz',
    }),
  renderMarkdown: (client) => renderMarkdown(client, { Text: 'Fixed in #42' }),
  markNotificationThread: (client) => markNotificationThread(client, { id: 10001 }),
};

const MIDDLEWARE = {
  none: undefined,
  'passes through': { onRequest: () => undefined },
  'throws with the request': {
    onRequest: ({ request }: { request: Request }) => {
      const authorization = request.headers.get('authorization');
      throw new Error(`refused ${authorization}`, {
        cause: { request, authorization, otp: request.headers.get('x-gitea-otp') },
      });
    },
  },
  'throws with the response': {
    onResponse: async ({ response }: { response: Response }) => {
      throw Object.assign(new Error(`bad answer: ${(await response.clone().text()).slice(0, 300)}`), { response });
    },
  },
} as const;

/** Text meant to break things: line breaks, NUL and other controls, quotes, escapes, Unicode, lone surrogates. */
const hostileUnit = fc.oneof(
  fc.constantFrom(
    '\r',
    '\n',
    '\r\n',
    '\0',
    '\t',
    '\b',
    '\f',
    ' ',
    '\x7f',
    '\x1b',
    ':',
    '"',
    "'",
    '\\',
    '%',
    '+',
    '/',
    '=',
    '<',
    '>',
    '&',
    ',',
    ';',
    '\u00a0',
    '\u2028',
    '\u2029',
    'é',
    'É',
    'ß',
    '密',
    '😀',
    '\ud800',
    '\udfff',
  ),
  fc.string({ minLength: 1, maxLength: 1 }),
);
/**
 * A secret: a distinctive start (so finding it in a rendering means it leaked, not that a short
 * common word matched) and a tail that is either printable ASCII or hostile.
 */
const secret = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9]{6}$/),
    fc.oneof(fc.stringMatching(/^[\x21-\x7e]{0,24}$/), fc.string({ unit: hostileUnit, maxLength: 24 })),
  )
  .map(([core, tail]) => `Zq${core}${tail}`);
const otpCode = fc.oneof(fc.stringMatching(/^[0-9]{6}$/), secret);

const credentials = fc.oneof(
  fc.record({ token: secret }),
  fc.record(
    {
      username: fc.constantFrom('alice', 'zoë'),
      password: secret,
      otp: fc.oneof(
        otpCode,
        otpCode.map((code) => () => code),
      ),
    },
    { requiredKeys: ['username', 'password'] },
  ),
);

const scenario = fc.record({
  auth: credentials,
  sudo: fc.option(fc.constantFrom('bob', 'carol'), { nil: undefined }),
  apiKey: fc.option(secret, { nil: undefined }),
  throwOnError: fc.boolean(),
  returned: fc.boolean(),
  middleware: fc.constantFrom(...(Object.keys(MIDDLEWARE) as (keyof typeof MIDDLEWARE)[])),
  entry: fc.constantFrom(...Object.keys(ENTRY_POINTS)),
  mode: fc.constantFrom(...MODES),
});

type ScenarioValue = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** The secrets a scenario hands the client, and the Basic credential the client builds from them. */
function secretsOf({ auth, apiKey }: ScenarioValue): string[] {
  const found = apiKey === undefined ? [] : [apiKey];
  if ('token' in auth) return [...found, auth.token];
  found.push(auth.password);
  if (typeof auth.otp === 'string') found.push(auth.otp);
  if (typeof auth.otp === 'function') found.push(auth.otp());
  try {
    encodeURIComponent(auth.password);
    found.push(Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64'));
  } catch {
    // an unpaired surrogate: refused before any header is built
  }
  return found;
}

/** Before the random runs: each entry point against each server behaviour, so every seed covers them all. */
const SWEEP: [ScenarioValue][] = Object.keys(ENTRY_POINTS).flatMap((entry, index) =>
  MODES.map((chosen, step): [ScenarioValue] => [
    {
      auth:
        index % 2
          ? { token: 'Zqsweep0tok"en' }
          : { username: 'alice', password: 'Zqsweep0pass word', otp: () => '424242' },
      sudo: undefined,
      apiKey: step % 2 ? 'Zqsweep0key' : undefined,
      throwOnError: step % 2 === 0,
      returned: step % 4 === 1,
      middleware: (Object.keys(MIDDLEWARE) as (keyof typeof MIDDLEWARE)[])[(index + step) % 4]!,
      entry,
      mode: chosen,
    },
  ]),
);

describe(`no secret in any error (fast-check seed ${SEED}, ${SWEEP.length} fixed and ${RUNS} random runs)`, () => {
  it('through every entry point, middleware on and off, against echoing, failing, resetting and stalling answers', async () => {
    const kinds = new Map<string, number>();
    const seen = { entries: new Set<string>(), modes: new Set<string>(), middleware: new Set<string>() };
    await fc.assert(
      fc.asyncProperty(scenario, async (value) => {
        const { auth, sudo, apiKey, throwOnError, returned, middleware, entry, mode: chosen } = value;
        mode = chosen;
        let error: unknown;
        let outcome: unknown;
        try {
          const client = createGiteaClient({
            baseUrl,
            auth: { ...auth, ...(sudo ? { sudo } : {}) },
            ...(apiKey === undefined ? {} : { headers: { 'X-Api-Key': apiKey } }),
            throwOnError,
            retry: { retries: 1, baseDelayMs: 1 },
            timeoutMs: 150,
          });
          const added = MIDDLEWARE[middleware];
          if (added) client.use(added as never);
          outcome = await ENTRY_POINTS[entry]!(client, throwOnError, returned);
        } catch (caught) {
          error = caught;
        }
        seen.entries.add(entry);
        seen.modes.add(chosen);
        seen.middleware.add(middleware);
        if (error === undefined) {
          const { error: failure } = (outcome ?? {}) as { error?: unknown };
          const kind = failure === undefined ? 'no error' : 'returned { error }';
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          // The default mode's error, as README's first example prints it.
          if (failure !== undefined) expectNoSecret(failure, secretsOf(value));
          return;
        }
        // Never a crash: always an Error, of a kind the README names.
        expect(error).toBeInstanceOf(Error);
        const kind =
          error instanceof ApiError
            ? 'ApiError'
            : error instanceof TimeoutError
              ? 'TimeoutError'
              : `${(error as Error).name}: ${(error as Error).message.replace(/Zq\S*|\[REDACTED\]\S*/g, '…').slice(0, 60)}`;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        expectNoSecret(error, secretsOf(value));
      }),
      { seed: SEED, numRuns: SWEEP.length + RUNS, examples: SWEEP },
    );
    // What the runs came to, shown only with a failure: a green run prints no error names.
    const outcomes = `redaction property: seed ${SEED}, ${SWEEP.length} fixed and ${RUNS} random runs; outcomes:\n${[
      ...kinds,
    ]
      .sort((a, b) => b[1] - a[1])
      .map(([kind, count]) => `  ${String(count).padStart(4)}  ${kind}`)
      .join('\n')}`;
    // The runs reached every entry point, server behaviour and middleware, and the errors that matter.
    expect([...seen.entries].sort(), outcomes).toEqual(Object.keys(ENTRY_POINTS).sort());
    expect([...seen.modes].sort(), outcomes).toEqual([...MODES].sort());
    expect([...seen.middleware].sort(), outcomes).toEqual(Object.keys(MIDDLEWARE).sort());
    for (const expected of ['ApiError', 'TimeoutError', 'returned { error }'])
      expect(kinds.get(expected), outcomes).toBeGreaterThan(0);
    const names = [...kinds.keys()].join('\n');
    expect(names, outcomes).toMatch(/^TypeError: auth\.(token|password|otp|username)/m);
    expect(names, outcomes).toMatch(/^TypeError: the code auth\.otp\(\) returned/m);
    expect(names, outcomes).toMatch(/^TypeError: fetch failed/m);
    expect(names, outcomes).toMatch(/^TypeError: Invalid URL/m);
    expect(names, outcomes).toMatch(/^Error: refused/m);
    expect(names, outcomes).toMatch(/^Error: bad answer/m);
  }, 120_000);
});

/** How an upstream may write a secret back into a text: the encodings, then the case. */
const ENCODINGS: Record<string, (secret: string) => string> = {
  'as written': (text) => text,
  'JSON-escaped': (text) => JSON.stringify(text).slice(1, -1),
  'JSON-escaped as Go does': goJsonEscaped,
  'every UTF-16 unit \\u-escaped': (text) =>
    text.replace(/[\s\S]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`),
  // An unpaired surrogate has no percent-encoding: such secrets are kept as written.
  'percent-encoded': (text) => (text.isWellFormed() ? encodeURIComponent(text) : text),
  'percent-encoded, every UTF-8 byte': (text) =>
    text.isWellFormed()
      ? [...new TextEncoder().encode(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')
      : text,
  // As a form or URLSearchParams writes a query: a space as +.
  'form-encoded': (text) => (text.isWellFormed() ? new URLSearchParams({ q: text }).toString().slice(2) : text),
};
const CASES: Record<string, (text: string) => string> = {
  'as is': (text) => text,
  'lower-cased': (text) => text.toLowerCase(),
  'upper-cased': (text) => text.toUpperCase(),
};

describe(`redact(text, secrets) (fast-check seed ${SEED})`, () => {
  it('replaces a secret in each encoding, in any case, wherever it sits in the text', () => {
    fc.assert(
      fc.property(
        secret,
        fc.constantFrom(...Object.keys(ENCODINGS)),
        fc.constantFrom(...Object.keys(CASES)),
        fc.string(),
        fc.string(),
        (value, encoding, casing, before, after) => {
          const written = CASES[casing]!(ENCODINGS[encoding]!(value));
          const text = redact(`${before}${written}${after}`, [value]);
          expect(text).toContain('[REDACTED]');
          expect(text.toLowerCase()).not.toContain(written.toLowerCase());
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});
