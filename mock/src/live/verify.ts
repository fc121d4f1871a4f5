// `gitea-mock verify --base-url https://host/api/v1`: live mode, checking a real server's answers.
import { writeFileSync } from 'node:fs';
import { type Auth, createGiteaClient, type GiteaClient, type GiteaClientOptions } from 'gitea-contract';
import { authorization, prefixHint, profileFor } from 'gitea-contract/internal';
import { readBounded, utf8Text } from '../common/bytes.js';
import { failureCause } from '../common/network-failure.js';
import { type Io, logger, parseCommand, refusing, usage } from '../common/options.js';
import { redact } from '../common/redaction.js';
import { usageError } from '../common/refusal.js';
import { type Answer, answerChecks, describeViolation } from '../contract/conformance.js';
import { listOperations } from '../contract/document.js';
import { profileDocument, readDocumentFile } from '../contract/document-file.js';
import { clip, kindOf } from '../contract/exchange-report.js';
import { junitXml, type Outcome, type Problem, REASONS, type RunRecord, type SkipKind } from './junit.js';

/** The most of an answer live mode reads: a server may send without end. */
const READ_LIMIT = 10 * 1024 * 1024;
const TOO_LARGE = `body is larger than ${READ_LIMIT / 1024 / 1024} MB: not checked`;
/** Statuses whose answers have no body (a Response of one refuses any). */
const NULL_BODY = [204, 205, 304];

type CapturedAnswer = Answer & { tooLarge: boolean };
/** Why a check or a look-up has nothing to go on: the server's data or the options (`input`), or no answer. */
type Skip = { skip: string; kind: 'input' | 'timeout' | 'network' };
/** A look-up's record, or why it found none (with `input`, the `status` the server answered). */
type Found = { record: Record<string, unknown> } | (Skip & { status?: number });

/** GET `url` with the credentials, a redirect unfollowed, its answer read up to `limit` bytes. */
async function get(url: string | URL, { headers }: Credentials, signal: AbortSignal, limit: number) {
  const response = await fetch(url, { headers, signal, redirect: 'manual' });
  const { bytes, complete } = await readBounded(response.body, limit);
  return { response, text: utf8Text(bytes), complete };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonString(body: string, field: string): string | undefined {
  const value = (parseJson(body) as Record<string, unknown> | null)?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** From GITEA_TOKEN, else GITEA_USERNAME and GITEA_PASSWORD (and GITEA_OTP); a refusal's line names the variables
 * `sent`, and those set but `unsent` and why, so the one to fix is plain. */
export function readCredentials(env: Record<string, string | undefined>) {
  const { GITEA_TOKEN: token, GITEA_USERNAME: username, GITEA_PASSWORD: password, GITEA_OTP: otp } = env;
  const auth: Auth | undefined = token
    ? { token }
    : username && password
      ? { username, password, ...(otp ? { otp } : {}) }
      : undefined;
  const header = auth && authorization(auth);
  const headers: Record<string, string> = header ? { Authorization: header } : {};
  const secrets = header ? [header, header.slice(6), token || password!, ...(!token && otp ? [otp] : [])] : [];
  const basicNames = `GITEA_USERNAME${otp ? ', GITEA_PASSWORD and GITEA_OTP' : ' and GITEA_PASSWORD'}`;
  let unsent: string | undefined;
  if (token && (username || password))
    unsent = `${[username && 'GITEA_USERNAME', password && 'GITEA_PASSWORD'].filter(Boolean).join(' and ')}, set too but not sent: GITEA_TOKEN goes first`;
  else if (!auth && (username || password))
    unsent = `${username ? 'GITEA_USERNAME' : 'GITEA_PASSWORD'} is set without ${username ? 'GITEA_PASSWORD' : 'GITEA_USERNAME'}, so neither was sent`;
  return { auth, headers, secrets, sent: token ? 'GITEA_TOKEN' : auth ? basicNames : undefined, unsent };
}

type Credentials = ReturnType<typeof readCredentials>;

export function refusedLine(baseUrl: string, { sent, unsent }: Credentials, answered: string): string {
  if (!sent)
    return `${baseUrl} asks for credentials and none were given (${unsent ? `${unsent}; ` : ''}set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): ${answered}`;
  return `${baseUrl} refused the credentials in ${sent}${unsent ? ` (${unsent})` : ''}: ${answered}`;
}

/** The run's --timeout and each request's --request-timeout, whichever ends first; `spent`: why no more may be sent. */
function createBudget(runMs: number, requestMs: number) {
  const ends = performance.now() + runMs;
  const ranOut = `the run's --timeout of ${runMs / 1000} s ran out`;
  const left = (): number => Math.max(0, ends - performance.now());
  return {
    spent: () => (left() > 0 ? undefined : ranOut),
    /** What `work`, given the signal of a request's time limit, resolved with or threw, and `timedOut`, why that
     * signal was aborted; undefined when no time is left to send it. */
    async send<T>(work: (signal: AbortSignal) => Promise<T>) {
      const remaining = left();
      if (remaining <= 0) return undefined;
      const reason = remaining < requestMs ? ranOut : `no answer within the --request-timeout of ${requestMs / 1000} s`;
      const controller = new AbortController();
      // Not AbortSignal.timeout: a fetch hung on a closed connection would let Node exit 13 without a word.
      const timer = setTimeout(() => controller.abort(new Error(reason)), Math.min(remaining, requestMs));
      const settled = await work(controller.signal).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      clearTimeout(timer);
      return { ...settled, timedOut: controller.signal.aborted ? reason : undefined };
    },
  };
}

/** A version is a few bytes, a wrong address may be a large page. */
const PROBE_READ_LIMIT = 64 * 1024;

/** GET {baseUrl}/version: the server's name and version, or the one-line reason there is no Gitea API there. */
type Probe =
  | { ok: true; server: string; family: 'gitea' | 'forgejo'; version: string }
  | { ok: false; problem: string };

async function probeServer(run: Run): Promise<Probe> {
  const { baseUrl, timeoutMs: runMs, connectTimeoutMs } = run.options;
  const [timeoutMs, timeoutFlag] =
    runMs < connectTimeoutMs ? [runMs, '--timeout'] : [connectTimeoutMs, '--connect-timeout'];
  const hide = (text: string): string => redact(text, run.credentials.secrets);
  // Redacted, then cut short: cut first, a secret's start would be left where it fell.
  const cut = (text: string): string => clip(hide(text), 80);
  const quote = (text: string): string => JSON.stringify(cut(text.replace(/\s+/g, ' ').trim()));
  const url = new URL(`${baseUrl.replace(/\/$/, '')}/version`);
  // A redirect is reported, not followed: the base URL to give is the one it points to. With
  // REQUIRE_SIGNIN_VIEW, Gitea refuses /version to anonymous callers: the credentials go along.
  const budget = createBudget(timeoutMs, timeoutMs);
  const sent = (await budget.send((signal) => get(url, run.credentials, signal, PROBE_READ_LIMIT)))!;
  if (!sent.ok) {
    const cause = sent.timedOut
      ? `ETIMEDOUT (no answer to GET /version within ${timeoutMs / 1000} s; ${timeoutFlag} waits longer)`
      : failureCause(sent.error, url);
    return { ok: false, problem: hide(`cannot reach ${baseUrl}: ${cause}`) };
  }
  const { response, text: body } = sent.value;
  const version = response.ok ? jsonString(body, 'version') : undefined;
  if (version) {
    // Forgejo 7 and later mark the Gitea release they track (`11.0.1+gitea-1.22.0`); older ones show as Gitea.
    const family = /\+gitea-\d/.test(version) ? 'forgejo' : 'gitea';
    const name = family === 'forgejo' ? 'Forgejo' : 'Gitea';
    const server = `${name} ${/^[\x21-\x7e]{1,100}$/.test(version) ? version : quote(version)}`;
    return { ok: true, server, family, version };
  }
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  let instead: string;
  const json = parseJson(body);
  if (response.status >= 300 && response.status < 400)
    instead = `a redirect to ${cut(response.headers.get('location') ?? 'nowhere')}`;
  else if (body.trim() === '') instead = `an empty body${type ? ` (${type})` : ''}`;
  else if (type === 'text/html' || /^\s*</.test(body)) {
    const title = /<title[^>]*>([^<]*)/i.exec(body)?.[1];
    instead = `an HTML page${title?.trim() ? ` titled ${quote(title)}` : ''}`;
  } else if (json !== undefined) instead = `JSON ${cut(JSON.stringify(json))}`;
  else instead = `${type || 'a body without a content type'}: ${quote(body)}`;
  const answered = `GET /version answered ${response.status} with ${instead}`;
  // 401 or 403: REQUIRE_SIGNIN_VIEW and a missing or wrong credential. Without /api/v1, /version is a web page.
  const hint = prefixHint(baseUrl);
  const problem =
    response.status === 401 || response.status === 403
      ? refusedLine(baseUrl, run.credentials, answered)
      : `no Gitea API at ${baseUrl}: ${answered}, not {"version": "…"}${hint ? `; ${hint}` : ''}`;
  return { ok: false, problem: hide(problem) };
}

/** The client, whose fetch reads each answer whole before the client sees it, and the last answer read. */
function createCapture(settings: Omit<GiteaClientOptions, 'fetch'>) {
  let last: CapturedAnswer | undefined;
  const fetchWhole = (async (input, init) => {
    const response = await fetch(input, init);
    const { status, statusText, headers, url } = response;
    const { bytes, complete } = await readBounded(response.body, READ_LIMIT);
    last = { status, headers, body: complete ? utf8Text(bytes) : '', tooLarge: !complete };
    // The client gets the bytes read, never the stream: an answer too large to check is an error.
    if (!complete) throw new Error(TOO_LARGE);
    const answer = new Response(NULL_BODY.includes(status) ? null : bytes, { status, statusText, headers });
    Object.defineProperty(answer, 'url', { value: url });
    return answer;
  }) as typeof fetch;
  const client = createGiteaClient({ ...settings, fetch: fetchWhole });
  return {
    last: () => last,
    /** The client for one call, the answer before it forgotten: it hands a redirect back unfollowed (the 3xx is the
     * answer, checked against the document, and nothing goes where it points) and carries the signal of its time
     * limit (--request-timeout, within --timeout). */
    client(signal: AbortSignal): GiteaClient {
      last = undefined;
      return new Proxy(client, {
        get: (target, name, receiver) => {
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' && typeof name === 'string' && /^[A-Z]+$/.test(name)
            ? (path: string, init?: object) => value(path, { ...init, redirect: 'manual', signal })
            : value;
        },
      });
    },
  };
}

/** `401 "token is required"`, the message redacted, then cut short. */
function statusWithMessage(status: number, body: string, secrets: readonly string[]): string {
  const message = redact(jsonString(body, 'message') ?? '', secrets);
  return message ? `${status} ${JSON.stringify(clip(message, 200))}` : String(status);
}

// Gitea answers 401 only for missing or wrong credentials, on every route, authenticating before routing
// (routers/api/v1/api.go `apiAuth`, `reqToken`), and a few 403s refuse the account (`verifyAuthWithOptions`): the
// run ends. A token without a scope gets a 403 for one operation (`tokenRequiresScopes`, `checkTokenPublicOnly`).
const SCOPE = /^(token does not have at least one of required scope|token scope is limited to public )/;
const ACCOUNT =
  /^(This account is not activated\.|This account is prohibited from signing in|You must change your password\.|Only signed in user is allowed to call APIs\.)/;

/** How `answer` refuses the credentials: `everywhere`, or for this `operation` (a scope); undefined: one to judge. */
function refusalIn({ status, body }: Answer): 'everywhere' | 'operation' | undefined {
  const message = status === 403 ? (jsonString(body, 'message') ?? '') : '';
  return status === 401 || ACCOUNT.test(message) ? 'everywhere' : SCOPE.test(message) ? 'operation' : undefined;
}

const IDS = ['key-id', 'team-id', 'comment-id', 'issue', 'pull', 'milestone-id', 'hook-id', 'release-id'] as const;
type Id = (typeof IDS)[number];
/** Given as options (an id by its option's name), or looked up on the server. */
type Target = Partial<Record<Id, number> & Record<'owner' | 'repo' | 'workflow' | 'collaborator', string>> & {
  package?: { owner: string; type: string; name: string };
};

type Call = (client: GiteaClient) => Promise<unknown>;
type Check = { operationId: string; writes: boolean; prepare(target: Target, run: Run): Promise<Call | Skip> };
const check = (operationId: string, writes: boolean, prepare: Check['prepare']) => ({ operationId, writes, prepare });
type Repo = { owner: string; repo: string };

const lacking = (skip: string): Skip => ({ skip, kind: 'input' });
const needRepo = lacking('give --repo owner/name');

/** What was sought, why it was not found, and the option that gives it (not when the look-up got no answer). */
const notFound = (what: string, found: Skip, option: string): Skip => ({
  skip: `no ${what} to use: ${found.skip}${found.kind === 'input' ? `; give --${option}` : ''}`,
  kind: found.kind,
});

/** A record by its id: the option `given`, else the `field` of the first one at `list` (below the repository but `/user`). */
function byId(
  [operationId, writes, given, list, what, field = 'id']: [string, boolean, Id, string, string, field?: string],
  call: (repo: Repo, id: number) => Call,
): Check {
  return check(operationId, writes, async (target, run) => {
    const { owner, repo } = target;
    const inRepo = !list.startsWith('/user');
    if (inRepo && !writes && (!owner || !repo)) return needRepo;
    const path = inRepo ? `/repos/${owner}/${repo}${list}` : list;
    let id: unknown = target[given];
    if (id === undefined) {
      const found = await lookUp(run, path);
      if ('skip' in found) return notFound(what, found, given);
      id = found.record[field];
    }
    if (!Number.isInteger(id))
      return lacking(`no ${what} to use: GET ${path} answered a record without an integer ${field}; give --${given}`);
    return call({ owner: owner!, repo: repo! }, id as number);
  });
}

/** A write sending a record's own settings back (`body` of them): the record `given`, else the first listed; `{}` when
 * the server has no read of a given id (404 or 405, as the mock): on Gitea that read answers whenever the edit does. */
function edit(
  [operationId, given, list, what]: [string, Id, string, string],
  body: (settings: Record<string, unknown>, run: Run) => Record<string, unknown>,
  call: (repo: Repo, id: unknown, body: never) => Call,
): Check {
  return check(operationId, true, async (target, run) => {
    const { owner, repo } = target as Repo;
    const id = target[given];
    const listed = `/repos/${owner}/${repo}${list}`;
    const found = await lookUp(run, id === undefined ? listed : `${listed.split('?')[0]}/${id}`);
    if ('skip' in found && id === undefined) return notFound(what, found, given);
    if ('skip' in found && found.status !== 404 && found.status !== 405)
      return { skip: `the ${what}'s settings could not be read, to send them back: ${found.skip}`, kind: found.kind };
    const settings = 'record' in found ? found.record : {};
    return call({ owner, repo }, id ?? settings.id, body(settings, run) as never);
  });
}

const FEW = { limit: 5 };

const checks: Check[] = [
  check('adminGetAllOrgs', false, async () => (client) => client.GET('/admin/orgs', { params: { query: FEW } })),
  check('listPackageVersions', false, async ({ package: given, owner }, run) => {
    let pkg = given;
    if (!pkg) {
      if (!owner) return lacking('give --package owner/type/name (or --repo whose owner has packages)');
      const found = await lookUp(run, `/packages/${encodeURIComponent(owner)}`);
      if ('skip' in found) return notFound('package', found, 'package owner/type/name');
      pkg = { owner, type: String(found.record.type), name: String(found.record.name) };
    }
    const path = pkg as { owner: string; type: never; name: string };
    return (client) => client.GET('/packages/{owner}/{type}/{name}', { params: { path } });
  }),
  byId(
    ['repoGetKey', false, 'key-id', '/keys', 'deploy key'],
    (repo, id) => (client) => client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { ...repo, id } } }),
  ),
  byId(
    ['orgListTeamMembers', false, 'team-id', '/user/teams', 'team'],
    (_, id) => (client) => client.GET('/teams/{id}/members', { params: { path: { id }, query: FEW } }),
  ),
  check('ActionsGetWorkflow', false, async ({ owner, repo, workflow }, run) => {
    if (!owner || !repo) return needRepo;
    let workflow_id = workflow;
    if (!workflow_id) {
      const path = `/repos/${owner}/${repo}/actions/workflows`;
      const found = await lookUp(run, path);
      if ('skip' in found) return notFound('workflow', found, 'workflow file.yml');
      const listed = (found.record as { workflows?: { id?: unknown }[] }).workflows?.[0]?.id;
      if (typeof listed !== 'string')
        return lacking(`no workflow to use: GET ${path} listed none; give --workflow file.yml`);
      workflow_id = listed;
    }
    const path = { owner, repo, workflow_id };
    return (client) => client.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', { params: { path } });
  }),
  byId(
    ['issueListIssueCommentAttachments', false, 'comment-id', '/issues/comments', 'comment'],
    (repo, id) => (client) =>
      client.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', { params: { path: { ...repo, id } } }),
  ),
  // Renders and stores nothing, so it runs by default too.
  check('renderMarkdown', false, async () => (client) => {
    const body = { Text: '# Contract check\n\nIssue #1, **bold**.', Mode: 'markdown' as const };
    return client.POST('/markdown', { body, parseAs: 'text' });
  }),
  check('repoAddCollaborator', true, async (target) => {
    const { owner, repo, collaborator } = target as Repo & Target;
    if (!collaborator) return lacking('give --collaborator user (added to the scratch repository with read access)');
    const path = { owner, repo, collaborator };
    const body = { permission: 'read' as const };
    return (client) => client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', { params: { path }, body });
  }),
  // Removing nobody changes nothing but is a full request.
  byId(['issueRemoveAssignees', true, 'issue', '/issues?state=all&type=issues', 'issue', 'number'], (repo, index) => {
    const body = { assignees: [] };
    return (client) =>
      client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', { params: { path: { ...repo, index } }, body });
  }),
  byId(
    ['repoEditPullRequest', true, 'pull', '/pulls?state=all', 'pull request', 'number'],
    (repo, index) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...repo, index } }, body: {} }),
  ),
  // Its own title again, and its deadline: the server clears the deadline when due_on is omitted.
  edit(
    ['issueEditMilestone', 'milestone-id', '/milestones?state=all', 'milestone'],
    (milestone) => ({
      ...(milestone.title ? { title: String(milestone.title) } : {}),
      ...(milestone.due_on ? { due_on: String(milestone.due_on) } : {}),
    }),
    (repo, id, body) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/milestones/{id}', { params: { path: { ...repo, id: String(id) } }, body }),
  ),
  // Its own settings again: the server resets the events, the branch filter and the authorization
  // header when they are omitted (it shows the header back in clear: kept out of every line and file).
  edit(
    ['repoEditHook', 'hook-id', '/hooks', 'webhook'],
    ({ active, events, branch_filter, authorization_header }, run) => {
      if (typeof authorization_header === 'string' && authorization_header)
        run.credentials.secrets.push(authorization_header);
      return {
        ...(typeof active === 'boolean' ? { active } : {}),
        ...(Array.isArray(events) ? { events } : {}),
        ...(typeof branch_filter === 'string' ? { branch_filter } : {}),
        ...(typeof authorization_header === 'string' ? { authorization_header } : {}),
      };
    },
    (repo, id, body) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { ...repo, id: Number(id) } }, body }),
  ),
  byId(['repoCreateReleaseAttachment', true, 'release-id', '/releases', 'release'], (repo, id) => {
    const form = new FormData();
    form.append('attachment', new Blob(['written by gitea-contract live mode\n']), 'gitea-contract-live-check.txt');
    return (client) =>
      client.POST('/repos/{owner}/{repo}/releases/{id}/assets', {
        params: { path: { ...repo, id } },
        body: form as never,
        bodySerializer: (body: unknown) => body as FormData,
      });
  }),
];

/** Operations live mode never runs: they change data outside the scratch repository. */
const neverRun = [
  'userCreateOAuth2Application',
  'repoMigrate',
  'userCurrentPostGPGKey',
  'notifyReadThread',
  'orgEditLabel',
  'updateUserSecret',
  'adminRenameUser',
];

const USAGE = usage(
  'verify',
  'gitea-mock verify --base-url https://host/api/v1 [options]',
  `
Credentials come from the environment: GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD
(and GITEA_OTP for two-factor accounts).

Exit code: 0 every operation checked conforms; 1 at least one has a mismatch; 2 nothing was
checked (a wrong option, no Gitea API at the base URL, credentials refused, every operation
skipped, timed out or without an answer; with --allow-writes, no write checked; with
--fail-on-skip, any operation skipped).`,
);

function ownerRepo(value: string | undefined, name: string): { owner?: string; repo?: string } {
  const [owner, repo, extra] = value?.split('/') ?? [];
  if (value !== undefined && (!owner || !repo || extra !== undefined))
    throw usageError(`--${name} takes owner/name, not "${value}"`);
  return value === undefined ? {} : { owner: owner!, repo: repo! };
}

/** Undefined for --help; a wrong option is a usage error, told before anything is sent. */
function parseOptions(argv: string[]) {
  const args = parseCommand('verify', argv);
  if (args.positionals.length > 0)
    throw usageError(
      'an argument that is no option was given (not repeated here, as it could be a credential): live mode takes options only, the base URL as --base-url, credentials from GITEA_TOKEN or GITEA_USERNAME and GITEA_PASSWORD',
    );
  if (args.help) return undefined;
  const baseUrl = args.text('base-url');
  if (!baseUrl) throw usageError('--base-url is required');
  const scratchRepo = args.text('scratch-repo');
  if (args.flag('allow-writes') && !scratchRepo) throw usageError('--allow-writes needs --scratch-repo owner/name');
  const pkg = args.text('package');
  const [owner, type, name, extra] = pkg?.split('/') ?? [];
  if (pkg !== undefined && (!owner || !type || !name || extra !== undefined))
    throw usageError(`--package takes owner/type/name, not "${pkg}"`);
  const ids = IDS.flatMap((option) => {
    const value = args.text(option);
    if (value !== undefined && !/^\d+$/.test(value)) throw usageError(`--${option} takes a number, not "${value}"`);
    return value === undefined ? [] : [[option, Number(value)]];
  });
  const [workflow, collaborator] = [args.text('workflow'), args.text('collaborator')];
  const readTarget: Target = {
    ...ownerRepo(args.text('repo'), 'repo'),
    ...Object.fromEntries(ids),
    ...(workflow ? { workflow } : {}),
    ...(pkg ? { package: { owner: owner!, type: type!, name: name! } } : {}),
    ...(collaborator ? { collaborator } : {}),
  };
  return {
    baseUrl,
    readTarget,
    writeTarget: { ...readTarget, ...ownerRepo(scratchRepo, 'scratch-repo') },
    allowWrites: args.flag('allow-writes'),
    failOnSkip: args.flag('fail-on-skip'),
    scratchRepo,
    allowInsecureHttp: args.flag('allow-insecure-http'),
    report: args.file('report'),
    junit: args.file('junit'),
    timeoutMs: args.seconds('timeout'),
    requestTimeoutMs: args.seconds('request-timeout'),
    connectTimeoutMs: args.seconds('connect-timeout'),
    server: args.server(),
  };
}

/** Skips that leave unchecked an operation the run was asked to check: what `--fail-on-skip` fails. */
const UNCHECKED: readonly SkipKind[] = ['scope', 'timeout', 'network', 'too-large', 'input'];

type Skipped = Outcome & { checked: false };

/** Per kind of skip, in REASONS' order, how many and why, then what `detail` adds about them. */
const byReason = (outcomes: readonly Skipped[], detail: (kind: SkipKind, of: Skipped[]) => string) =>
  REASONS.flatMap(([kind, reason]) => {
    const of = outcomes.filter((outcome) => outcome.kind === kind);
    return of.length === 0 ? [] : [`${of.length} ${reason}${detail(kind, of)}`];
  }).join('; ');

/** Per operation the proxy's counts and what live mode knows besides; redacted as text, where secrets are JSON-escaped too. */
function jsonReport(run: RunRecord, secrets: readonly string[]): string {
  const operations: Record<string, object> = {};
  const skipped: Record<string, object> = {};
  for (const outcome of [...run.outcomes].sort((a, b) => a.operationId.localeCompare(b.operationId))) {
    if (!outcome.checked) {
      skipped[outcome.operationId] = { kind: outcome.kind, cause: outcome.cause };
      continue;
    }
    const { status, problems, notChecked } = outcome;
    const violations: Record<string, number> = {};
    for (const { kind, count = 1 } of problems) violations[kind] = (violations[kind] ?? 0) + count;
    const stats = { exchanges: 1, withViolations: problems.length > 0 ? 1 : 0, violations, status: status ?? null };
    const mismatches = problems.map(({ line }) => line);
    operations[outcome.operationId] = { ...stats, mismatches, ...(notChecked ? { notChecked } : {}) };
  }
  const { baseUrl, server = null, profile = null, started, finished, exitCode, stopped } = run;
  const report = {
    ...{ baseUrl, server, profile, started, finished, exitCode },
    ...(stopped ? { stopped } : {}),
    ...{ operations, skipped },
  };
  return `${redact(JSON.stringify(report, null, 2), secrets)}\n`;
}

/** The run's lines, redacted, held until an answer shows the credentials work: a refused run prints one stderr line. */
function createOutput(io: Io, secrets: readonly string[]) {
  let held: string[] | undefined = [];
  const log = logger({ stdout: io.stdout, stderr: (text) => io.stderr(redact(text, secrets)) }, 'gitea-mock verify');
  return {
    log,
    say(line: string): void {
      const text = redact(line, secrets);
      if (held) held.push(text);
      else log.plain(text);
    },
    /** Prints the lines held, or drops them for the `error` that ends the run, on stderr. */
    release(error?: string): void {
      if (error) log.err(error);
      else for (const line of held ?? []) log.plain(line);
      held = undefined;
    },
  };
}

/** Undefined for --help: the options, the client, whose fetch captures each answer, the run's record and budget. */
function startRun(args: readonly string[], credentials: Credentials, out: ReturnType<typeof createOutput>) {
  const options = parseOptions([...args]);
  if (!options) return undefined;
  const { baseUrl, allowInsecureHttp } = options;
  const auth = credentials.auth ? { auth: credentials.auth } : {};
  // What the client refuses (such as http://) is a usage error too.
  const capture = refusing('', () => createCapture({ baseUrl, ...auth, retry: 0, allowInsecureHttp }));
  const now = new Date();
  const record: RunRecord = { baseUrl, started: now, finished: now, exitCode: 2, outcomes: [] };
  const budget = createBudget(options.timeoutMs, options.requestTimeoutMs);
  return { options, credentials, out, record, budget, capture };
}

type Run = NonNullable<ReturnType<typeof startRun>>;

/** With `stopped`, the one line on stderr saying why nothing (more) could be checked, the rest not run; the files. */
function finish({ out, record, options, credentials }: Run, exitCode: number, stopped?: string): number {
  out.release(stopped);
  const taken = new Set(record.outcomes.map(({ operationId }) => operationId));
  const cause = `not run: ${stopped ?? 'the run ended'}`;
  for (const operationId of [...checks.map((check) => check.operationId), ...neverRun])
    if (!taken.has(operationId)) record.outcomes.push({ operationId, checked: false, kind: 'stopped', cause });
  Object.assign(record, { exitCode, stopped, finished: new Date() });
  try {
    if (options.report) writeFileSync(options.report, jsonReport(record, credentials.secrets));
    if (options.junit) writeFileSync(options.junit, junitXml(record, credentials.secrets));
  } catch (error) {
    out.release(`cannot write the results: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  return exitCode;
}

/** The first record `GET {baseUrl}{path}` answers (the first of a list, or the record itself), outside the contract. */
async function lookUp({ options, credentials, budget }: Run, path: string): Promise<Found> {
  const asked = `GET ${path}`;
  const url = `${options.baseUrl.replace(/\/$/, '')}${path}${path.includes('?') ? '&' : '?'}limit=1`;
  const sent = await budget.send((signal) => get(url, credentials, signal, READ_LIMIT));
  if (!sent) return { skip: `${asked} was not sent: ${budget.spent()}`, kind: 'timeout' };
  if (!sent.ok && sent.timedOut) return { skip: `${asked} timed out: ${sent.timedOut}`, kind: 'timeout' };
  if (!sent.ok) return { skip: `${asked} failed: ${failureCause(sent.error)}`, kind: 'network' };
  const { response, text, complete } = sent.value;
  const { status } = response;
  const missing = (why: string): Found => ({ skip: `${asked} ${why}`, kind: 'input', status });
  if (!response.ok) return missing(`answered ${statusWithMessage(status, complete ? text : '', credentials.secrets)}`);
  if (!complete) return missing(`answered more than ${READ_LIMIT / 1024 / 1024} MB`);
  const body = parseJson(text);
  if (body === undefined) return missing(`answered ${status} with a body that is not JSON`);
  const record = Array.isArray(body) ? (body[0] as unknown) : body;
  if (record === null || typeof record !== 'object') return missing('listed none');
  return { record: record as Record<string, unknown> };
}

type Judge = (operationId: string, answer: CapturedAnswer) => Problem[];

/** Resolves with the line that stops the run, if it must. */
/** `absentFrom`: the profile of a server without the operation, which is then not run. */
async function runCheck(run: Run, judge: Judge, check: Check, absentFrom?: string): Promise<string | undefined> {
  const { operationId, writes, prepare } = check;
  const { options, budget, record, credentials, out } = run;
  const label = operationId.padEnd(34);
  const skip = (kind: SkipKind, cause: string, verb = 'skipped'): undefined => {
    record.outcomes.push({ operationId, checked: false, kind, cause });
    out.say(`- ${label} ${verb}: ${cause}`);
  };
  if (absentFrom) return skip('absent', `${absentFrom} has no route for it`, 'not run');
  if (writes && !options.allowWrites)
    return skip('writes', 'it writes (use --allow-writes --scratch-repo owner/name)', 'not run');
  if (budget.spent()) return skip('timeout', budget.spent()!, 'not run');
  const began = performance.now();
  const call = await prepare(writes ? options.writeTarget : options.readTarget, run);
  if (typeof call !== 'function') return skip(call.kind, call.skip);
  const sent = await budget.send((signal) => call(run.capture.client(signal)));
  if (!sent) return skip('timeout', budget.spent()!, 'not run');
  const answer = run.capture.last();
  if (!answer && sent.timedOut) return skip('timeout', `timed out: ${sent.timedOut}`);
  // No answer at all (refused, reset, closed): nothing to judge, so no mismatch.
  if (!answer)
    return skip('network', sent.ok ? 'no answer was received' : `the request failed: ${failureCause(sent.error)}`);
  const answered = (): string => `answered ${statusWithMessage(answer.status, answer.body, credentials.secrets)}`;
  const refusal = refusalIn(answer);
  if (refusal === 'everywhere') {
    const cause = `the credentials were refused: ${answered()}`;
    record.outcomes.push({ operationId, checked: false, kind: 'stopped', cause });
    return refusedLine(options.baseUrl, credentials, `${operationId} ${answered()}`);
  }
  if (refusal === 'operation') return skip('scope', `the token lacks a scope: ${answered()}`);
  out.release();
  let problems: Problem[];
  try {
    problems = judge(operationId, answer);
  } catch (error) {
    // Live mode's own failure, not the server's: the run stops with it, its files written.
    const cause = error instanceof Error ? error.message : String(error);
    return `the check of ${operationId}'s answer failed: ${cause}; this is a bug in gitea-mock`;
  }
  const { status } = answer;
  // Conforming, yet not checked: a body too large to read; a 404, which wrote or read nothing
  // (a run whose writes all went nowhere, or a wrong id, must not pass for one that checked them).
  if (problems.length === 0 && answer.tooLarge)
    return skip(
      'too-large',
      `answered ${status} with a ${TOO_LARGE.replace(/^body is/, 'body')} (its status and declared headers conform)`,
    );
  if (problems.length === 0 && status === 404)
    return skip(
      'input',
      writes
        ? `nothing was written: ${answered()} (the scratch repository ${options.scratchRepo}, or what this write names in it, is not there)`
        : `nothing was read: ${answered()} (what this read names is not there: check the ids and the repository given)`,
    );
  const notChecked = answer.tooLarge ? { notChecked: TOO_LARGE } : {};
  record.outcomes.push({ operationId, checked: true, status, problems, ms: performance.now() - began, ...notChecked });
  if (problems.length === 0) return void out.say(`✓ ${label} ${status} conforms`);
  const count = problems.reduce((sum, problem) => sum + (problem.count ?? 1), 0);
  out.say(`✗ ${label} ${status} ${count} mismatch${count > 1 ? 'es' : ''}`);
  for (const { line } of problems) out.say(`    ${line}`);
  if (answer.tooLarge) out.say(`    (${TOO_LARGE})`);
}

/** After every check: the summary, and the exit code (2 when nothing, no write, or with --fail-on-skip any was skipped). */
function summarize(run: Run): number {
  const { out, record, options } = run;
  out.release();
  out.say(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
  const cause = 'never run by live mode: it changes data outside a scratch repository';
  for (const operationId of neverRun) record.outcomes.push({ operationId, checked: false, kind: 'never', cause });
  const checked = record.outcomes.filter((outcome) => outcome.checked);
  const failed = checked.filter((outcome) => outcome.problems.length > 0).length;
  const skipped = record.outcomes.filter((outcome): outcome is Skipped => !outcome.checked);
  out.say(`${checked.length} of ${record.outcomes.length} operations checked, ${failed} with mismatches`);
  // Those the run was asked to check are named; writes and those never run are listed above.
  const names = (kind: SkipKind, of: Skipped[]) =>
    UNCHECKED.includes(kind) ? ` (${of.map(({ operationId }) => operationId).join(', ')})` : '';
  if (skipped.length > 0) out.say(`${skipped.length} not checked: ${byReason(skipped, names)}`);
  const unchecked = skipped.filter((outcome) => UNCHECKED.includes(outcome.kind));
  /** `what: ` and, per kind of skip among the operations `among`, how many and the first with its cause. */
  const nothing = (what: string, among = (_: string) => true): string => {
    const of = unchecked.filter(({ operationId }) => among(operationId));
    return `${what}: ${byReason(of, (_, [first]) => ` (the first, ${first!.operationId}: ${first!.cause})`)}`;
  };
  // With --allow-writes, a run that wrote nothing cannot pass.
  const writes = new Set(checks.filter((check) => check.writes).map((check) => check.operationId));
  const many = unchecked.length;
  const stopped =
    checked.length === 0
      ? nothing('no operation could be checked')
      : failed > 0
        ? undefined
        : options.allowWrites && !checked.some(({ operationId }) => writes.has(operationId))
          ? nothing(`no write could be checked in ${options.scratchRepo}`, (id) => writes.has(id))
          : options.failOnSkip && many > 0
            ? nothing(`${many} operation${many === 1 ? '' : 's'} could not be checked (--fail-on-skip)`)
            : undefined;
  return finish(run, stopped ? 2 : failed > 0 ? 1 : 0, stopped);
}

export async function verify(args: readonly string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  // The credentials first: every line printed and every file written from here on is redacted of them.
  const credentials = readCredentials(env);
  const out = createOutput(io, credentials.secrets);
  const run = await out.log.options(USAGE, () => startRun(args, credentials, out));
  if (typeof run === 'number') return run;
  const { options, record } = run;
  const probe = await probeServer(run);
  if (!probe.ok) return finish(run, 2, probe.problem);
  record.server = probe.server;
  // The server's own contract: the profile named, else that of the version it answered.
  const { profile, warning } = options.server ? { profile: options.server } : profileFor(probe.family, probe.version);
  record.profile = profile;
  // The document is read only now: a server that is not there is told in a blink.
  const document = readDocumentFile(profileDocument(profile)).document;
  const present = new Set(listOperations(document).map(({ operation }) => String(operation.operationId)));
  const answerCheck = answerChecks(document).check;
  const hide = (text: string): string => redact(text, credentials.secrets);
  /** What an answer breaks; of a body too large to read whole, its status and headers only. */
  const judge: Judge = (operationId, answer) =>
    answerCheck(operationId, answer, { body: !answer.tooLarge, redact: hide }).map((violation) => {
      const line = describeViolation(violation);
      return { kind: kindOf(`response ${line}`), line, ...(violation.count ? { count: violation.count } : {}) };
    });
  const mode = options.allowWrites ? `writes allowed in ${options.scratchRepo}` : 'read-only';
  out.say(`live contract check of ${options.baseUrl} (${mode})`);
  // The version comes from the server, which may echo a credential there too.
  out.say(`server: ${probe.server}`);
  out.say(`profile: ${profile}${warning ? ` (${warning})` : ''}`);
  for (const check of checks) {
    const stopped = await runCheck(run, judge, check, present.has(check.operationId) ? undefined : profile);
    if (stopped) return finish(run, 2, stopped);
  }
  return summarize(run);
}
