// `gitea-mock verify --base-url https://host/api/v1` (in this repository, `npm run test:live --
// --base-url …`): checks that a Gitea API answers there,
// runs operations against it (a real Gitea or Forgejo), validates every answer against
// openapi.yaml, prints the mismatches per operation and exits 1 if there are any. A server that
// cannot be reached, or is no Gitea API, is a usage error (exit 2), as are wrong options. Every
// line it prints is redacted of the credentials, in any case, even those a server echoes; it
// reads at most 10 MB of an answer, and judges a redirect as the answer instead of following it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { authorization, type Auth } from '../../../src/auth.js';
import { createGiteaClient, type GiteaClient } from 'gitea-contract';
import { redact } from '../../../src/redact.js';
import { listOperations, type JsonObject } from '../contract/document.js';
import { createSchemaValidator } from '../contract/schema.js';
import { DOCUMENT } from '../contract/document-path.js';
import { checks, neverRun, type Context, type Target } from './checks.js';
import { probeServer } from './reachability.js';
import { describeViolation, mismatches, type Answer } from '../contract/conformance.js';

const USAGE = `Usage: gitea-mock verify --base-url https://host/api/v1 [options]

Credentials come from the environment: GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD
(and GITEA_OTP for two-factor accounts).

  --base-url <url>          the API root, ending in /api/v1 (required)
  --repo <owner/name>       a repository to read from (deploy key, workflow, comment)
  --key-id, --team-id, --comment-id <n>, --workflow <file.yml>, --package <owner/type/name>
                            ids to use; those not given are discovered where the server lists them
  --allow-writes            also run operations that change data, inside --scratch-repo only
  --scratch-repo <owner/name>  the repository writes may touch (required with --allow-writes)
  --collaborator <user>     a user to add to the scratch repository with read access
  --allow-insecure-http     send credentials over plain http to a non-local host
  --connect-timeout <s>     seconds to wait for the server's answer to GET /version (default 10)
  --help
`;

// The credentials first: every line printed from here on is redacted of them.
const env = process.env;
const auth: Auth | undefined = env.GITEA_TOKEN
  ? { token: env.GITEA_TOKEN }
  : env.GITEA_USERNAME && env.GITEA_PASSWORD
    ? { username: env.GITEA_USERNAME, password: env.GITEA_PASSWORD, ...(env.GITEA_OTP ? { otp: env.GITEA_OTP } : {}) }
    : undefined;
const headers: Record<string, string> = auth ? { Authorization: authorization(auth) } : {};
// The Authorization value, the token or Basic credential in it, the token or password, the one-time code.
const secrets = auth ? [headers.Authorization!, headers.Authorization!.slice(6), 'token' in auth ? auth.token : auth.password, ...('otp' in auth && typeof auth.otp === 'string' ? [auth.otp] : [])] : [];

/** Prints a line of the report; a server may have echoed a credential into it, in any case. */
function say(line: string): void {
  process.stdout.write(`${redact(line, secrets)}\n`);
}

/** Prints `test:live: <message>` on stderr, redacted as the report is. */
function warn(message: string, after = ''): void {
  process.stderr.write(redact(`test:live: ${message}\n${after}`, secrets));
}

function fail(message: string): never {
  warn(message, `\n${USAGE}`);
  process.exit(2);
}

function ownerRepo(value: string | undefined, flag: string): { owner?: string; repo?: string } {
  if (value === undefined) return {};
  const [owner, repo, extra] = value.split('/');
  if (!owner || !repo || extra !== undefined) fail(`${flag} takes owner/name, not "${value}"`);
  return { owner, repo };
}

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) fail(`${flag} takes a number, not "${value}"`);
  return Number(value);
}

let args;
try {
  args = parseArgs({
    options: {
      'base-url': { type: 'string' },
      repo: { type: 'string' },
      'key-id': { type: 'string' },
      'team-id': { type: 'string' },
      'comment-id': { type: 'string' },
      workflow: { type: 'string' },
      package: { type: 'string' },
      'allow-writes': { type: 'boolean', default: false },
      'scratch-repo': { type: 'string' },
      collaborator: { type: 'string' },
      'allow-insecure-http': { type: 'boolean', default: false },
      'connect-timeout': { type: 'string', default: '10' },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const baseUrl = args['base-url'];
if (!baseUrl) fail('--base-url is required');
if (args['allow-writes'] && !args['scratch-repo']) fail('--allow-writes needs --scratch-repo owner/name');
const connectTimeout = Number(args['connect-timeout']);
if (!/^\d+(\.\d+)?$/.test(args['connect-timeout']) || connectTimeout <= 0) fail(`--connect-timeout takes a number of seconds above 0, not "${args['connect-timeout']}"`);

if (!auth) warn('no GITEA_TOKEN or GITEA_USERNAME/GITEA_PASSWORD: most operations will answer 401');

const packageParts = args.package?.split('/');
if (packageParts && packageParts.length !== 3) fail(`--package takes owner/type/name, not "${args.package}"`);
const readTarget: Target = {
  ...ownerRepo(args.repo, '--repo'),
  ...(args['key-id'] ? { keyId: integer(args['key-id'], '--key-id')! } : {}),
  ...(args['team-id'] ? { teamId: integer(args['team-id'], '--team-id')! } : {}),
  ...(args['comment-id'] ? { commentId: integer(args['comment-id'], '--comment-id')! } : {}),
  ...(args.workflow ? { workflow: args.workflow } : {}),
  ...(packageParts ? { package: { owner: packageParts[0]!, type: packageParts[1]!, name: packageParts[2]! } } : {}),
  ...(args.collaborator ? { collaborator: args.collaborator } : {}),
};
const writeTarget: Target = { ...readTarget, ...ownerRepo(args['scratch-repo'], '--scratch-repo') };

/** The most of an answer live mode reads, as the proxy checks at most: a server may send without end. */
const READ_LIMIT = 10 * 1024 * 1024;
const TOO_LARGE = `body is larger than ${READ_LIMIT / 1024 / 1024} MB: not checked`;
/** Statuses whose answers have no body (a Response of one refuses any). */
const NULL_BODY = [204, 205, 304];

/** The body, read straight from the stream (no copy to buffer the rest); undefined when over `limit`, the rest discarded. */
async function readAtMost(response: Response, limit: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    if ((size += part.value.length) > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks);
}

// Every answer is kept whole, up to READ_LIMIT, so that it can be checked byte for byte against the document.
let last: (Answer & { tooLarge: boolean }) | undefined;
const capture: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const { status, statusText, headers: answered, url } = response;
  const bytes = await readAtMost(response, READ_LIMIT);
  last = { status, headers: answered, body: bytes ? new TextDecoder().decode(bytes) : '', tooLarge: !bytes };
  // The client gets the bytes read, never the stream: an answer too large to check is an error.
  if (!bytes) throw new Error(TOO_LARGE);
  const answer = new Response(NULL_BODY.includes(status) ? null : bytes, { status, statusText, headers: answered });
  Object.defineProperty(answer, 'url', { value: url });
  return answer;
};
let client: GiteaClient;
try {
  const made = createGiteaClient({ baseUrl, ...(auth ? { auth } : {}), fetch: capture, retry: 0, timeoutMs: 60_000, allowInsecureHttp: args['allow-insecure-http'] });
  // Each call hands a redirect back unfollowed: the 3xx is the server's answer, checked against
  // the document (some operations declare 301 or 307), and nothing goes where it points.
  client = new Proxy(made, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' && typeof name === 'string' && /^[A-Z]+$/.test(name) ? (path: string, init?: object) => value(path, { ...init, redirect: 'manual' }) : value;
    },
  });
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const first = async (path: string): Promise<Record<string, unknown> | undefined> => {
  // A timer of our own, not AbortSignal.timeout: that one does not keep the process alive, and a
  // fetch hung on a closed connection would let Node exit 13 without a word (reachability.ts).
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), 30_000);
  try {
    // A redirect is not followed here either: where it points may not be the server.
    const response = await fetch(`${baseUrl.replace(/\/$/, '')}${path}${path.includes('?') ? '&' : '?'}limit=1`, { headers, signal: timer.signal, redirect: 'manual' });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const bytes = await readAtMost(response, READ_LIMIT);
    if (!bytes) return undefined;
    const body = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    return (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timeout);
  }
};

const probe = await probeServer(baseUrl, { headers, timeoutMs: connectTimeout * 1000, secrets });
if (!probe.ok) {
  warn(probe.problem);
  process.exit(2);
}
// The document and its validators only now: a server that is not there is told in a blink.
const doc = parse(readFileSync(DOCUMENT, 'utf8'), { maxAliasCount: -1 }) as JsonObject;
const schemas = createSchemaValidator(doc);
const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
say(`live contract check of ${baseUrl} (${args['allow-writes'] ? `writes allowed in ${args['scratch-repo']}` : 'read-only'})`);
// The version comes from the server, which may echo a credential there too.
say(`server: ${probe.server}`);
let checked = 0;
let failed = 0;
for (const check of checks) {
  const label = check.operationId.padEnd(34);
  if (check.writes && !args['allow-writes']) {
    say(`- ${label} not run: it writes (use --allow-writes --scratch-repo owner/name)`);
    continue;
  }
  const ctx: Context = { target: check.writes ? writeTarget : readTarget, first };
  const call = await check.prepare(ctx);
  if (typeof call === 'string') {
    say(`- ${label} skipped: ${call}`);
    continue;
  }
  last = undefined;
  checked++;
  /** What the answer breaks: a body too large to read whole is not checked, and says so. */
  const judge = (answer: Answer & { tooLarge: boolean }): string[] => {
    const found = mismatches(doc, schemas, operations.get(check.operationId)!, answer, { body: !answer.tooLarge }).map(describeViolation);
    return answer.tooLarge ? [...found, TOO_LARGE] : found;
  };
  let problems: string[];
  try {
    await call(client);
    problems = last ? judge(last) : ['no answer was received'];
  } catch (error) {
    problems = last ? judge(last) : [`the request failed: ${error instanceof Error ? error.message : String(error)}`];
  }
  const status = (last as Answer | undefined)?.status;
  if (problems.length === 0) {
    say(`✓ ${label} ${status} conforms`);
  } else {
    failed++;
    say(`✗ ${label} ${status ?? '—'} ${problems.length} mismatch${problems.length > 1 ? 'es' : ''}`);
    for (const problem of problems) say(`    ${problem}`);
  }
}
say(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
say(`${checked} operations checked, ${failed} with mismatches`);
if (checked === 0) {
  warn('no operation could be checked');
  process.exit(2);
}
process.exit(failed > 0 ? 1 : 0);
