#!/usr/bin/env node
// `npm run test:live -- --base-url https://host/api/v1`: checks that a Gitea API answers there,
// runs operations against it (a real Gitea or Forgejo), validates every answer against
// openapi.yaml, prints the mismatches per operation and exits 1 if there are any. A server that
// cannot be reached, or is no Gitea API, is a usage error (exit 2), as are wrong options.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { authorization, type Auth } from '../../src/auth.js';
import { createGiteaClient } from '../../src/index.js';
import { listOperations, type JsonObject } from '../../test/support/document.js';
import { createSchemaValidator } from '../../test/support/schema.js';
import { DOCUMENT } from '../document-path.js';
import { checks, neverRun, type Context, type Target } from './checks.js';
import { probeServer } from './reachability.js';
import { describeViolation, mismatches, type Answer } from '../conformance.js';

const USAGE = `Usage: npm run test:live -- --base-url https://host/api/v1 [options]

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

function fail(message: string): never {
  process.stderr.write(`test:live: ${message}\n\n${USAGE}`);
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

const env = process.env;
const auth: Auth | undefined = env.GITEA_TOKEN
  ? { token: env.GITEA_TOKEN }
  : env.GITEA_USERNAME && env.GITEA_PASSWORD
    ? { username: env.GITEA_USERNAME, password: env.GITEA_PASSWORD, ...(env.GITEA_OTP ? { otp: env.GITEA_OTP } : {}) }
    : undefined;
if (!auth) process.stderr.write('test:live: no GITEA_TOKEN or GITEA_USERNAME/GITEA_PASSWORD: most operations will answer 401\n');

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

// Every answer is kept whole, so that it can be checked byte for byte against the document.
let last: Answer | undefined;
const capture: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const copy = response.clone();
  last = { status: response.status, headers: response.headers, body: await copy.text() };
  return response;
};
let client;
try {
  client = createGiteaClient({ baseUrl, ...(auth ? { auth } : {}), fetch: capture, retry: 0, timeoutMs: 60_000, allowInsecureHttp: args['allow-insecure-http'] });
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const headers: Record<string, string> = auth ? { Authorization: authorization(auth) } : {};
// The Authorization value, the token or Basic credential in it, and the token or password.
const secrets = auth ? [headers.Authorization!, headers.Authorization!.slice(6), 'token' in auth ? auth.token : auth.password] : [];
const first = async (path: string): Promise<Record<string, unknown> | undefined> => {
  // A timer of our own, not AbortSignal.timeout: that one does not keep the process alive, and a
  // fetch hung on a closed connection would let Node exit 13 without a word (reachability.ts).
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), 30_000);
  try {
    const response = await fetch(`${baseUrl.replace(/\/$/, '')}${path}${path.includes('?') ? '&' : '?'}limit=1`, { headers, signal: timer.signal });
    if (!response.ok) return undefined;
    const body = (await response.json()) as unknown;
    return (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timeout);
  }
};

const probe = await probeServer(baseUrl, { headers, timeoutMs: connectTimeout * 1000, secrets });
if (!probe.ok) {
  process.stderr.write(`test:live: ${probe.problem}\n`);
  process.exit(2);
}
// The document and its validators only now: a server that is not there is told in a blink.
const doc = parse(readFileSync(DOCUMENT, 'utf8'), { maxAliasCount: -1 }) as JsonObject;
const schemas = createSchemaValidator(doc);
const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
console.log(`live contract check of ${baseUrl} (${args['allow-writes'] ? `writes allowed in ${args['scratch-repo']}` : 'read-only'})`);
console.log(`server: ${probe.server}`);
let checked = 0;
let failed = 0;
for (const check of checks) {
  const label = check.operationId.padEnd(34);
  if (check.writes && !args['allow-writes']) {
    console.log(`- ${label} not run: it writes (use --allow-writes --scratch-repo owner/name)`);
    continue;
  }
  const ctx: Context = { target: check.writes ? writeTarget : readTarget, first };
  const call = await check.prepare(ctx);
  if (typeof call === 'string') {
    console.log(`- ${label} skipped: ${call}`);
    continue;
  }
  last = undefined;
  checked++;
  let problems: string[];
  try {
    await call(client);
    problems = last ? mismatches(doc, schemas, operations.get(check.operationId)!, last).map(describeViolation) : ['no answer was received'];
  } catch (error) {
    problems = last ? mismatches(doc, schemas, operations.get(check.operationId)!, last).map(describeViolation) : [`the request failed: ${error instanceof Error ? error.message : String(error)}`];
  }
  const status = (last as Answer | undefined)?.status;
  if (problems.length === 0) {
    console.log(`✓ ${label} ${status} conforms`);
  } else {
    failed++;
    console.log(`✗ ${label} ${status ?? '—'} ${problems.length} mismatch${problems.length > 1 ? 'es' : ''}`);
    for (const problem of problems) console.log(`    ${problem}`);
  }
}
console.log(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
console.log(`${checked} operations checked, ${failed} with mismatches`);
if (checked === 0) {
  process.stderr.write('test:live: no operation could be checked\n');
  process.exit(2);
}
process.exit(failed > 0 ? 1 : 0);
