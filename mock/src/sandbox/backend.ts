// GiteaBackend: a sandbox world's answer to each operation, a method per operationId, as Gitea 1.27 answers it (the handlers at commit f26f71f1b2).
// A method changes the world in one synchronous step after its checks; a refusal is a thrown SandboxError and changes nothing,
// except where Gitea saves in turn (repoEditPullRequest), whose refusal keeps what it saved before.
import { sha1 } from '@noble/hashes/legacy';
import type { operations, paths } from 'gitea-contract';
import { hex, randomBytes, randomUuid, utf8Bytes, utf8Length, utf8Text } from '../common/bytes.js';
import { Refusal } from '../common/refusal.js';
import type { Answer } from '../front/app.js';
import { apiError } from '../front/errors.js';
import { goDecimal } from '../front/validation.js';
import type { FormPart } from '../front/body.js';
import { paginate } from '../examples/pagination.js';
import { sniffedType, type MarkdownRenderer } from './markdown-render.js';
import type { ServerRules } from './server-rules.js';
import { propagate, type Application, type Attachment, type GPGKey, type Issue, type PullRequest } from './world.js';
import type { Hook, Organization, Repository, Templates, User, World } from './world.js';

/** A refusal, as Gitea answers it: `{message, url}`, `{errors, message, url}` with `errors`, or `answer`'s body and type. */
export class SandboxError extends Refusal {
  constructor(
    status: number,
    message: string,
    /** `own`: a sandbox limit, not an answer of the API, not held to the document; `changed`: Gitea changed the world before it failed (it has no transaction); `notFound`: APIErrorNotFound, worded as the server's rules say. */
    readonly options: {
      errors?: string[] | null;
      answer?: Omit<Answer, 'status'>;
      own?: true;
      changed?: true;
      notFound?: true;
    } = {},
  ) {
    super(status, message);
  }
}

export function refusalAnswer(error: SandboxError, docsUrl: string, rules?: ServerRules): Answer {
  const { errors, answer, own, notFound } = error.options;
  const said = notFound && rules ? rules.notFound : { message: error.message, errors };
  const body =
    said.errors === undefined
      ? apiError(docsUrl, said.message)
      : { errors: said.errors, message: said.message, url: docsUrl };
  return { status: error.status, type: 'application/json', body, ...answer, ...(own && { own }) };
}

/** A call of an operation: the world it acts on and the request; `form` a multipart body's parts in place of `body`, `url` as the client addressed it (its query, and the host of new records' URLs), `caller` the Basic user name's user, else alice. */
export interface Call {
  world: World;
  params: Record<string, string>;
  body: unknown;
  form?: readonly FormPart[];
  url: URL;
  caller: User;
}

export type Reply = { answer: Answer; changed: boolean };

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
type PathOperation = { [P in keyof paths]: paths[P][Method & keyof paths[P]] }[keyof paths];
export type OperationId = {
  [K in keyof operations]: operations[K] extends PathOperation ? K : never;
}[keyof operations];

export const ZERO_TIME = '0001-01-01T00:00:00Z';
/** Longest new user name: a name is copied wherever its user appears, into every URL of their repositories too. */
const MAX_NAME_BYTES = 255;
/** `SecretDataMaxLength` */
const MAX_SECRET_BYTES = 65_536;
export const RESET_PATH = '/__sandbox/reset';
const ARMOUR_BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----';
const ARMOUR_END = '-----END PGP PUBLIC KEY BLOCK-----';

export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const endOfDay = (value: string): string => `${value.slice(0, 10)}T23:59:59Z`;
const isZeroTime = (value: string): boolean => Date.parse(value) === Date.parse(ZERO_TIME);
function freshId(world: World): number {
  world.created++;
  return world.nextId++;
}

const ok = (status: number, body: unknown, changed = false, headers?: Record<string, string>): Reply => ({
  answer: { status, type: 'application/json', body, ...(headers && { headers }) },
  changed,
});
const empty = (status: number, changed: boolean): Reply => ({ answer: { status }, changed });
const refuse = (status: number, message: string): SandboxError => new SandboxError(status, message);
const noRedirect = (name: unknown): string => `user redirect does not exist [name: ${String(name).toLowerCase()}]`;
/** `GetUserByName`, `GetOrgByName` */
const noSuchOwner = (name: string, lookup = 'GetUserByName'): SandboxError =>
  new SandboxError(404, lookup, { errors: [noRedirect(name)] });
/** APIErrorNotFound */
const notFound = (): SandboxError => new SandboxError(404, 'not found', { errors: null, notFound: true });
function found<T>(record: T | undefined): T {
  if (record === undefined) throw notFound();
  return record;
}

const same = (a: unknown, b: unknown): boolean =>
  typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
type Fields = Record<string, unknown>;
const fieldsOf = (call: Call): Fields =>
  typeof call.body === 'object' && call.body !== null ? (call.body as Fields) : {};
const has = (body: Fields, name: string): boolean => Object.hasOwn(body, name) && body[name] !== null;
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const userNamed = (world: World, login: unknown) => world.users.find((user) => same(user.login, login));
const orgNamed = (world: World, name: unknown) => world.orgs.find((org) => same(org.name, name));
const ownerNamed = (world: World, name: unknown) => userNamed(world, name) ?? orgNamed(world, name);
export const repoNamed = (world: World, owner: unknown, name: unknown): Repository | undefined =>
  world.repos.find((each) => same(each.owner.login, owner) && same(each.name, name));

/** The repository in the path; Gitea's 404 when unknown, where an unknown owner names itself. */
function repoOf({ world, params }: Call): Repository {
  const repo = repoNamed(world, params.owner, params.repo);
  if (repo) return repo;
  if (ownerNamed(world, params.owner)) throw notFound();
  throw noSuchOwner(String(params.owner));
}

/** The 307 Gitea answers when the path's owner is an old name of a renamed user: the path's first occurrence of it replaced, the query kept, relative. */
export function ownerRedirect(world: World, params: Record<string, string>, url: URL): Answer | undefined {
  const name = params.owner ?? params.username ?? params.org;
  if (name === undefined || ownerNamed(world, name)) return undefined;
  const redirect = world.redirects.find((entry) => entry.name === name.toLowerCase());
  const user = redirect && world.users.find((candidate) => candidate.id === redirect.user);
  if (!user) return undefined;
  const location = url.pathname.replace(encodeURIComponent(name), encodeURIComponent(user.login)) + url.search;
  return { status: 307, headers: { Location: location } };
}

function page(call: Call, all: unknown[]): Reply {
  const { items, headers } = paginate(all, call.url);
  return ok(200, items, false, headers);
}

const inRepo = <E extends { repo: number }>(list: E[], repo: Repository, id: unknown, pick: (entry: E) => unknown) =>
  found(list.find((each) => each.repo === repo.id && pick(each) === id));

/** Why `pull` cannot take `base` as its new base (services/pull/pull.go `ChangeTargetBranch`), as a status and message; none when it can. */
function retargetRefusal(
  world: World,
  repo: Repository,
  pull: PullRequest,
  base: string,
): [number, string] | undefined {
  if (!world.branches.some((branch) => branch.repo === repo.id && branch.name === base))
    return [404, `new base '${base}' not exist`];
  if (pull.state === 'closed')
    return [422, `Pull Request [id: ${pull.id}, repo_id: ${repo.id}, index: ${pull.number}] is already closed`];
  const headRepo = pull.head?.repo_id ?? repo.id;
  // The same branch as the head: no commits between them, an error Gitea does not map.
  if (headRepo === repo.id && pull.head?.ref === base) return [500, ''];
  const twin = world.pulls.find(
    ({ pull: other }) =>
      other.id !== pull.id &&
      other.state === 'open' &&
      !other.merged &&
      (other.base?.repo_id ?? repo.id) === repo.id &&
      other.base?.ref === base &&
      (other.head?.repo_id ?? repo.id) === headRepo &&
      other.head?.ref === pull.head?.ref,
  )?.pull;
  if (twin)
    return [
      409,
      `pull request already exists for these targets [id: ${twin.id}, issue_id: ${twin.number}, head_repo_id: ${headRepo}, base_repo_id: ${repo.id}, head_branch: ${twin.head?.ref}, base_branch: ${base}]`,
    ];
  return undefined;
}

function usersNamed(world: World, names: unknown[], refuse: (name: string) => SandboxError): User[] {
  const users = names.map((name) => userNamed(world, name));
  const missing = users.indexOf(undefined);
  if (missing >= 0) throw refuse(String(names[missing]));
  return [...new Set(users as User[])];
}

/** A User-shaped owner for an organization, as repositories show their owners: the world's, or a new one for the caller to keep. */
function ownerView(world: World, org: Organization, url: URL): User {
  const known = world.owners.find((owner) => owner.id === org.id);
  if (known) return known;
  return {
    id: org.id,
    login: org.name,
    login_name: '',
    source_id: 0,
    full_name: org.full_name ?? '',
    email: org.email ?? '',
    avatar_url: org.avatar_url ?? '',
    html_url: `${url.origin}/${org.name}`,
    language: '',
    is_admin: false,
    last_login: ZERO_TIME,
    created: ZERO_TIME,
    restricted: false,
    active: false,
    prohibit_login: false,
    location: org.location ?? '',
    website: org.website ?? '',
    description: org.description ?? '',
    visibility: org.visibility ?? 'public',
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
    username: org.name,
  };
}

/** issueRemoveAssignees on a pull request's index: the pull request as an issue, its fields in an issue's order. */
function pullAsIssue(pull: PullRequest, repo: Repository): Issue {
  const fields =
    'id url html_url number user title body labels milestone assignee assignees state is_locked comments created_at updated_at closed_at due_date pin_order content_version';
  const issue = Object.fromEntries(
    fields.split(' ').flatMap((name) => (name in pull ? [[name, pull[name as keyof PullRequest]]] : [])),
  ) as Issue;
  return {
    ...issue,
    url: pull.url.replace(/\/pulls\/(\d+)$/, '/issues/$1'),
    ...(pull.assignees?.length === 0 && { assignees: null }),
    original_author: '',
    original_author_id: 0,
    ref: '',
    assets: [],
    time_estimate: 0,
    repository: { id: repo.id, name: repo.name, owner: repo.owner.login, full_name: repo.full_name },
    pull_request: {
      draft: Boolean(pull.draft),
      html_url: pull.html_url,
      merged: Boolean(pull.merged),
      merged_at: pull.merged_at ?? null,
    },
    projects: null,
  };
}

/** Gitea's label colours: three or six hex digits, with or without `#`, `#abc` meaning `#aabbcc`; else its refusal. */
function labelColor(color: string): string {
  const text = color.trim().toLowerCase();
  const hex = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/.exec(text)?.[1];
  if (hex) return hex.length === 3 ? hex.replace(/./g, '$&$&') : hex;
  // The refusal repeats the colour trimmed and lower-cased, with `#` added to three or six characters.
  throw refuse(422, `invalid color: ${text.length === 3 || text.length === 6 ? `#${text}` : text}`);
}

/** Go's strconv.ParseInt(s, 0, 64): a sign, 0x/0o/0b prefixes, a leading 0 for octal, underscores between digits. */
export function parseGoInt(text: string): number | undefined {
  const match = /^([+-]?)(0[xX][_0-9a-fA-F]+|0[oO][_0-7]+|0[bB][_01]+|0[_0-7]*|[1-9][_0-9]*)$/.exec(text);
  if (!match) return undefined;
  const [, sign, digits = ''] = match;
  const prefix = /^0[xXoObB]/.exec(digits)?.[0] ?? (digits.length > 1 ? (digits.startsWith('0') ? '0' : '') : '');
  const base = ({ x: 16, o: 8, b: 2 } as Record<string, number>)[prefix.slice(1).toLowerCase()] ?? (prefix ? 8 : 10);
  const body = digits.slice(prefix.length);
  // An underscore must stand between digits; a base prefix counts as one.
  if (/__|_$/.test(body) || (body.startsWith('_') && !prefix)) return undefined;
  const value = parseInt(body.replace(/_/g, ''), base);
  return sign === '-' ? -value : value;
}

const ISSUES = 'issues issue_assign issue_label issue_milestone issue_comment'.split(' ');
const PULL_SUBS = 'assign label milestone comment review review_request sync'.split(' ');
const PULLS = ['pull_request', ...PULL_SUBS.map((sub) => `pull_request_${sub}`)];
const OTHERS = 'create push delete fork repository wiki release package status workflow_run workflow_job'.split(' ');
const single = (name: string): [string, string[]] => [name, [name.replace(/_only$/, '')]];
/** The events each name Gitea reads sets: `issues` and `pull_request` also their sub-events, `…_only` not, any other itself. */
const HOOK_EVENTS = new Map([...OTHERS, ...ISSUES, ...PULLS, 'issues_only', 'pull_request_only'].map(single))
  .set('issues', ISSUES)
  .set('pull_request', PULLS);

export class GiteaBackend implements Record<OperationId, (call: Call) => Reply | Promise<Reply>> {
  constructor(
    private readonly templates: Templates,
    private readonly render: MarkdownRenderer['render'],
    private readonly rules: ServerRules,
  ) {}

  repoEditHook(call: Call): Reply {
    const { hook } = inRepo(call.world.hooks, repoOf(call), goDecimal(call.params.id), (each) => each.hook.id);
    const body = fieldsOf(call);
    const sent = (has(body, 'config') ? body.config : {}) as Record<string, string>;
    // `validation.IsValidURL`: an absolute `http` or `https` URL.
    const badUrl = sent.url !== undefined && !(URL.canParse(sent.url) && /^https?:$/.test(new URL(sent.url).protocol));
    if (badUrl && this.rules.checksHookUrl) throw refuse(422, 'Invalid url');
    if (sent.content_type !== undefined && !['json', 'form'].includes(sent.content_type))
      throw refuse(422, 'Invalid content type');
    // routers/api/v1/utils/hook.go `editHook`, services/webhook/general.go `ToHook`: `url`, `content_type` and Slack's settings are kept; any other key, `secret` and `http_method` among them, is dropped.
    const kept = hook.config ?? {};
    const config: Hook['config'] = {
      url: sent.url ?? kept.url ?? '',
      content_type: sent.content_type ?? kept.content_type ?? 'json',
    };
    // Slack's settings (`SlackMeta`) are set together when `channel` is sent.
    if (hook.type === 'slack')
      for (const name of ['channel', 'username', 'icon_url', 'color'] as const)
        config[name] = sent.channel === undefined ? (kept[name] ?? '') : (sent[name] ?? '');
    hook.config = config;
    if (this.rules.hookShowsConfig) Object.assign(hook, { url: config.url, content_type: config.content_type });
    // As Gitea: names matched without regard to case, unknown names dropped, none at all meaning push.
    const names = Array.isArray(body.events) ? body.events.map((value) => String(value).toLowerCase()) : [];
    const events = names.flatMap((name) => HOOK_EVENTS.get(name) ?? []);
    hook.events = names.length === 0 ? ['push'] : [...new Set(events)];
    // branch_filter and the authorization header (answered in clear) are always replaced; active and name only when sent.
    hook.branch_filter = text(body.branch_filter) ?? '';
    hook.authorization_header = text(body.authorization_header) ?? '';
    if (typeof body.active === 'boolean') hook.active = body.active;
    if (typeof body.name === 'string') hook.name = body.name.trim();
    hook.updated_at = now();
    return ok(200, hook, true);
  }

  userCreateOAuth2Application(call: Call): Reply {
    const body = fieldsOf(call);
    if (typeof body.name !== 'string' || body.name === '') throw refuse(422, '[Name]: Required');
    const uris = Array.isArray(body.redirect_uris) ? (body.redirect_uris as string[]) : [];
    if (uris.length === 0) throw refuse(422, '[RedirectURIs]: Required');
    const invalid = uris.find((uri) => !URL.canParse(uri));
    if (invalid !== undefined && this.rules.checksRedirectUris) throw refuse(400, `invalid redirect URI: ${invalid}`);
    const { client_secret: _, ...template } = this.templates.application;
    const app: Application = {
      ...template,
      id: freshId(call.world),
      name: body.name,
      redirect_uris: uris,
      client_id: randomUuid(),
      confidential_client: body.confidential_client === true,
      skip_secondary_authorization: body.skip_secondary_authorization === true,
      created: now(),
    };
    call.world.apps.push({ user: call.caller.id, app });
    // Only in this answer, as Gitea's: 52 characters of lowercase base32, each a random byte modulo 32, all equally likely.
    const secret = Array.from(randomBytes(52), (byte) => 'abcdefghijklmnopqrstuvwxyz234567'[byte % 32]).join('');
    return ok(201, { ...app, client_secret: `gto_${secret}` }, true);
  }

  repoMigrate(call: Call): Reply {
    const body = fieldsOf(call);
    const { world, url } = call;
    let owner: User | undefined = call.caller;
    let ownerName = owner.login;
    const uid = typeof body.uid === 'number' ? body.uid : 0;
    if (typeof body.repo_owner === 'string' && body.repo_owner !== '') {
      ownerName = body.repo_owner;
      const org = orgNamed(world, ownerName);
      owner = org ? ownerView(world, org, url) : userNamed(world, ownerName);
    } else if (uid !== 0) {
      ownerName = '';
      owner = world.users.find((user) => user.id === uid) ?? world.owners.find((view) => view.id === uid);
    }
    if (!owner) throw refuse(422, `user does not exist [uid: ${uid}, name: ${ownerName}]`);
    const clone = String(body.clone_addr);
    if (!URL.canParse(clone))
      throw refuse(
        422,
        this.rules.namesInvalidCloneAddress
          ? `migration/cloning from '${clone}' is not allowed: the provided url is invalid`
          : 'The provided URL is invalid.',
      );
    const name = String(body.repo_name);
    if (world.repos.some((repo) => repo.owner.id === owner.id && same(repo.name, name)))
      throw refuse(409, 'The repository with the same name already exists.');
    const fullName = `${owner.login}/${name}`;
    const at = now();
    const mirror = body.mirror === true;
    // A new owner view is kept only with the repository: a refused creation changes nothing.
    if (!world.users.includes(owner) && !world.owners.includes(owner)) world.owners.push(owner);
    const repo: Repository = {
      ...structuredClone(this.templates.repository),
      id: freshId(world),
      owner: structuredClone(owner),
      name,
      full_name: fullName,
      description: text(body.description) ?? '',
      private: body.private === true,
      mirror,
      mirror_interval: mirror ? (text(body.mirror_interval) ?? '8h0m0s') : '',
      original_url: clone,
      html_url: `${url.origin}/${fullName}`,
      url: `${url.origin}/api/v1/repos/${fullName}`,
      languages_url: `${url.origin}/api/v1/repos/${fullName}/languages`,
      clone_url: `${url.origin}/${fullName}.git`,
      ssh_url: `git@${url.hostname}:${fullName}.git`,
      stars_count: 0,
      forks_count: 0,
      watchers_count: 1,
      open_issues_count: 0,
      open_pr_counter: 0,
      release_counter: 0,
      created_at: at,
      updated_at: at,
    };
    world.repos.push(repo);
    world.branches.push({ repo: repo.id, name: repo.default_branch || 'main' });
    return ok(201, repo, true);
  }

  issueRemoveAssignees(call: Call): Reply {
    const repo = repoOf(call);
    const index = goDecimal(call.params.index);
    const issue = call.world.issues.find((each) => each.repo === repo.id && each.issue.number === index)?.issue;
    const pull = call.world.pulls.find((each) => each.repo === repo.id && each.pull.number === index)?.pull;
    const target = issue ?? pull;
    if (!target) throw refuse(404, `issue does not exist [id: 0, repo_id: ${repo.id}, index: ${index}]`);
    const names = fieldsOf(call).assignees;
    const unknown = (name: string) => refuse(404, `user does not exist [uid: 0, name: ${name}]`);
    const removed = new Set(usersNamed(call.world, Array.isArray(names) ? names : [], unknown).map((user) => user.id));
    const left = (target.assignees ?? []).filter((user) => !removed.has(user.id!));
    target.assignee = left[0] ?? null;
    // An issue answers null when nobody is assigned; a pull request's own record keeps a list.
    if (issue) issue.assignees = left.length === 0 ? null : left;
    else pull!.assignees = left;
    target.updated_at = now();
    return ok(200, issue ?? pullAsIssue(pull!, repo), true);
  }

  repoEditPullRequest(call: Call): Reply {
    const repo = repoOf(call);
    const { world, caller } = call;
    const index = goDecimal(call.params.index);
    const { pull } = found(world.pulls.find((each) => each.repo === repo.id && each.pull.number === index));
    const body = fieldsOf(call);
    if (has(body, 'content_version') && body.content_version !== pull.content_version)
      throw refuse(409, 'the issue is already changed');
    // Gitea saves each part in turn, without a transaction: a refusal keeps the parts saved before it, and their deliveries.
    let changed = false;
    const fail = (status: number, message: string, answer?: SandboxError['options']['answer']) =>
      new SandboxError(status, message, { ...(answer && { answer }), ...(changed && { changed }) });
    const save = (part: Partial<PullRequest>) => {
      Object.assign(pull, part, { updated_at: now() });
      changed = true;
    };
    if (typeof body.title === 'string' && body.title !== '' && body.title !== pull.title) save({ title: body.title });
    // Every description bumps content_version, as Gitea's ChangeContent does, even one unchanged.
    if (typeof body.body === 'string')
      save({ body: body.body, content_version: Number(pull.content_version ?? 0) + 1 });
    const deadline = text(body.due_date);
    // Gitea dereferences a missing due_date when unset_due_date is false: a plain-text 500.
    if (body.unset_due_date === false && deadline === undefined)
      throw fail(500, 'Internal Server Error', { type: 'text/plain', body: 'Internal Server Error' });
    // The zero time removes the deadline, as unset_due_date does.
    if (deadline !== undefined || body.unset_due_date === true)
      save({ due_date: body.unset_due_date === true || isZeroTime(deadline!) ? null : endOfDay(deadline!) });
    const assignee = text(body.assignee) || undefined;
    if (has(body, 'assignees') || assignee) {
      const names = [...(assignee ? [assignee] : []), ...((body.assignees as unknown[] | null | undefined) ?? [])];
      // Gitea nests the lookup's error in its message.
      const unknown = (name: string) =>
        fail(422, `Assignee does not exist: [name: user does not exist [uid: 0, name: ${name}]]`);
      const assignees = structuredClone(usersNamed(world, names, unknown));
      save({ assignees, assignee: assignees[0] ?? null });
    }
    if (typeof body.milestone === 'number' && body.milestone !== 0 && body.milestone !== pull.milestone?.id) {
      const { milestone } =
        world.milestones.find((each) => each.repo === repo.id && each.milestone.id === body.milestone) ?? {};
      // Gitea does not map this error: a 500 whose message non-administrators see empty.
      if (!milestone) throw fail(500, '');
      save({ milestone: structuredClone(milestone) });
    }
    if (Array.isArray(body.labels)) {
      const ids = new Set(body.labels as number[]);
      const owner = world.orgs.find((org) => org.id === repo.owner.id);
      const available = [
        ...world.repoLabels.filter((each) => each.repo === repo.id),
        ...world.orgLabels.filter((each) => each.org === owner?.id),
      ];
      // Unknown label ids are dropped, as Gitea drops them.
      save({ labels: structuredClone(available.filter((each) => ids.has(each.label.id)).map((each) => each.label)) });
    }
    if (has(body, 'state')) {
      if (pull.merged) throw fail(412, 'cannot change state of this pull request, it was already merged');
      if (body.state === 'closed' && pull.state !== 'closed') save({ state: 'closed', closed_at: now() });
      if (body.state === 'open' && pull.state !== 'open') save({ state: 'open', closed_at: null });
    }
    // A merged pull request keeps its base, whatever was asked.
    const base = text(body.base);
    if (!pull.merged && base && base !== pull.base?.ref) {
      const refusal = retargetRefusal(world, repo, pull, base);
      if (refusal) throw fail(...refusal);
      save({ base: { ...pull.base, ref: base, label: base } });
    }
    if (typeof body.allow_maintainer_edit === 'boolean') {
      if (pull.user?.id !== caller.id) throw fail(403, 'SetAllowEdits: user not allowed to do this action');
      save({ allow_maintainer_edit: body.allow_maintainer_edit });
    }
    pull.updated_at = now();
    // Gitea answers an edit with 201.
    return ok(201, pull, true);
  }

  userCurrentPostGPGKey(call: Call): Reply {
    const body = fieldsOf(call);
    const armored = String(body.armored_public_key ?? '').trim();
    // Signatures are not checked: any signature counts as a valid one, which makes the key verified.
    const signed = typeof body.armored_signature === 'string' && body.armored_signature.trim() !== '';
    // The first armour's body, by indexOf: linear in the text however many begin lines it repeats.
    const begin = armored.indexOf(ARMOUR_BEGIN);
    const end = begin < 0 ? -1 : armored.indexOf(ARMOUR_END, begin + ARMOUR_BEGIN.length);
    if (end < 0) throw refuse(422, 'Failed to parse GPG key: no armored PGP public key block');
    if (call.world.gpgKeys.some((each) => each.armored === armored))
      throw refuse(422, 'A key with the same id already exists');
    const at = now();
    const lines = armored.slice(begin + ARMOUR_BEGIN.length, end).split('\n');
    const kept = lines.filter((line) => line.trim() !== '' && !line.includes(':') && !line.startsWith('='));
    const base64 = kept.join('').trim();
    // Keys are not parsed: the sample key answers its documented record; any other gets an id derived from its bytes.
    const key: GPGKey = {
      ...structuredClone(this.templates.gpgKey),
      id: freshId(call.world),
      ...(armored !== this.templates.sampleArmoredKey.trim() && {
        key_id: hex(sha1(utf8Bytes(base64)).slice(-8)).toUpperCase(),
        // Armored, as the service description has it (Gitea itself sends the bare base64).
        public_key: `${armored}\n`,
        emails: [{ email: call.caller.email!, verified: true }],
        subkeys: [],
      }),
      verified: signed,
      created_at: at,
    };
    // Gitea builds subkeys without their lists: both are null, and a subkey is never verified.
    for (const subkey of key.subkeys ?? [])
      Object.assign(subkey, { id: freshId(call.world), created_at: at, emails: null, subkeys: null, verified: false });
    call.world.gpgKeys.push({ user: call.caller.id, armored, key });
    return ok(201, key, true);
  }

  listPackageVersions(call: Call): Reply {
    const { owner, type, name } = call.params;
    if (!ownerNamed(call.world, owner)) throw refuse(404, noRedirect(owner));
    // The package is looked up first, by its name in any case: an unknown one is a 404.
    const versions = call.world.packages.filter(
      (pkg) => same(pkg.owner.login, owner) && pkg.type === type && same(pkg.name, name),
    );
    if (versions.length === 0) throw refuse(404, 'GetPackageByName: package does not exist');
    return page(call, versions);
  }

  notifyReadThread(call: Call): Reply {
    const id = goDecimal(call.params.id);
    const thread = call.world.threads.find((each) => each.id === id);
    if (!thread) throw refuse(404, `notification does not exist [id: ${id}]`);
    // One status of three; anything else means read.
    const wanted = (call.url.searchParams.get('to-status') ?? 'read').trim().toLowerCase();
    thread.unread = wanted === 'unread';
    thread.pinned = wanted === 'pinned';
    thread.updated_at = now();
    return ok(205, thread, true);
  }

  repoGetKey(call: Call): Reply {
    const id = goDecimal(call.params.id);
    return ok(200, inRepo(call.world.deployKeys, repoOf(call), id, (each) => each.key.id).key);
  }

  orgEditLabel(call: Call): Reply {
    const org = orgNamed(call.world, call.params.org);
    if (!org) throw noSuchOwner(String(call.params.org), 'GetOrgByName');
    const id = goDecimal(call.params.id);
    const { label } = found(call.world.orgLabels.find((each) => each.org === org.id && each.label.id === id));
    const body = fieldsOf(call);
    if (typeof body.color === 'string') label.color = labelColor(body.color);
    if (typeof body.name === 'string') label.name = body.name;
    if (typeof body.description === 'string') label.description = body.description;
    if (typeof body.exclusive === 'boolean') label.exclusive = body.exclusive;
    // As Gitea: an omitted is_archived un-archives the label.
    label.is_archived = body.is_archived === true;
    propagate(call.world, label);
    return ok(200, label, true);
  }

  async renderMarkdown(call: Call): Promise<Reply> {
    const body = fieldsOf(call);
    const asked = text(body.Mode) || 'markdown';
    // Forgejo passes on `comment` and `gfm` as sent and renders anything else as `markdown`.
    const known = this.rules.markdownModes === 'gitea' || asked === 'comment' || asked === 'gfm';
    const mode = body.Wiki === true ? 'wiki' : known ? asked : 'markdown';
    // /markdown has no file to take an extension from: Gitea finds no renderer for `file`.
    if (mode === 'file')
      throw new SandboxError(422, '', { answer: { type: 'text/plain', body: 'unable to find a render\n' } });
    const markdown = text(body.Text) ?? '';
    // Gitea writes nothing, so the answer has neither body nor media type.
    if (markdown === '') return empty(200, false);
    const rendered = await this.render({
      text: markdown,
      mode,
      context: text(body.Context),
      origin: call.url.origin,
      users: call.world.users.map((user) => user.login.toLowerCase()),
    });
    if (!rendered.ok) {
      const retry = rendered.status === 503 && { answer: { headers: { 'Retry-After': String(rendered.retryAfter) } } };
      throw new SandboxError(rendered.status, rendered.message, { own: true, ...retry });
    }
    return { answer: { status: 200, type: sniffedType(rendered.html), body: rendered.html }, changed: false };
  }

  orgListTeamMembers(call: Call): Reply {
    const team = found(call.world.teams.find((each) => each.team.id === goDecimal(call.params.id)));
    return page(call, team.members.map((id) => call.world.users.find((user) => user.id === id)).filter(Boolean));
  }

  ActionsGetWorkflow(call: Call): Reply {
    const repo = repoOf(call);
    const id = call.params.workflow_id;
    const entry = call.world.workflows.find((each) => each.repo === repo.id && each.workflow.id === id);
    if (!entry) throw refuse(404, `workflow "${id}" not found`);
    return ok(200, entry.workflow);
  }

  updateUserSecret(call: Call): Reply {
    // The front refuses a name Gitea refuses (front/validation.ts), as the document's pattern says.
    const name = String(call.params.secretname).toUpperCase();
    const data = fieldsOf(call).data;
    if (typeof data === 'string' && utf8Length(data) > MAX_SECRET_BYTES) throw refuse(400, 'data too long');
    if (call.world.secrets.some((secret) => secret.user === call.caller.id && secret.name === name))
      return empty(204, false);
    call.world.created++;
    call.world.secrets.push({ user: call.caller.id, name });
    return empty(201, true);
  }

  issueEditMilestone(call: Call): Reply {
    const repo = repoOf(call);
    const inRepo = call.world.milestones.filter((each) => each.repo === repo.id).map((each) => each.milestone);
    const id = parseGoInt(call.params.id ?? '');
    // By id when the number is one, else by exact title, as Gitea looks it up.
    const milestone = found(
      (id ? inRepo.find((each) => each.id === id) : undefined) ?? inRepo.find((each) => each.title === call.params.id),
    );
    const body = fieldsOf(call);
    const at = now();
    // A title of spaces passes Gitea's "not empty" test and is then trimmed away.
    if (typeof body.title === 'string' && body.title !== '') milestone.title = body.title.trim();
    if (typeof body.description === 'string') milestone.description = body.description;
    if (body.state === 'closed') {
      if (milestone.state !== 'closed') Object.assign(milestone, { state: 'closed', closed_at: at });
    } else if (typeof body.state === 'string') Object.assign(milestone, { state: 'open', closed_at: null });
    // As Gitea: no due_on (or null, the zero time, the epoch) clears the deadline.
    const due = text(body.due_on);
    milestone.due_on = due !== undefined && Date.parse(due) !== 0 && !isZeroTime(due) ? endOfDay(due) : null;
    milestone.updated_at = at;
    propagate(call.world, milestone);
    return ok(200, milestone, true);
  }

  repoCreateReleaseAttachment(call: Call): Reply {
    const release = inRepo(call.world.releases, repoOf(call), goDecimal(call.params.id), (each) => each.id);
    let name = call.url.searchParams.get('name') || undefined;
    let size = typeof call.body === 'string' ? call.body.length : 0;
    if (call.form) {
      const file = call.form.find((part) => part.name === 'attachment');
      // Gitea does not map a missing file part: a 500 whose message non-administrators see empty.
      if (file?.filename === undefined) throw refuse(500, '');
      const field = call.form.find((part) => part.name === 'name');
      const fieldName = field && field.filename === undefined ? utf8Text(field.data) : '';
      name ??= fieldName !== '' ? fieldName : file.filename;
      size = file.data.length;
    }
    // Any other body is the file itself, and only the query can name it.
    if (name === undefined) throw refuse(400, 'Could not determine name of attachment.');
    const uuid = randomUuid();
    const attachment: Attachment = {
      id: freshId(call.world),
      name,
      size,
      download_count: 0,
      created_at: now(),
      uuid,
      browser_download_url: `${call.url.origin}/attachments/${uuid}`,
    };
    release.attachments.push(attachment);
    return ok(201, attachment, true);
  }

  issueListIssueCommentAttachments(call: Call): Reply {
    const repo = repoOf(call);
    const comment = call.world.comments.find((each) => each.id === goDecimal(call.params.id));
    // An unknown comment is answered with the JSON literal null.
    if (!comment) throw new SandboxError(404, '', { answer: { body: null } });
    if (comment.repo !== repo.id) throw refuse(404, 'no matching issue comment found');
    return ok(200, comment.attachments);
  }

  adminRenameUser(call: Call): Reply {
    const { world } = call;
    const { username } = call.params;
    const user = userNamed(world, username);
    if (!user) {
      if (orgNamed(world, username)) throw refuse(422, `${username} is an organization not a user`);
      throw refuse(404, noRedirect(username));
    }
    // A name Gitea refuses never gets here: the front answers it (front/validation.ts).
    const newName = String(fieldsOf(call).new_username);
    if (newName === user.login) return empty(204, false);
    const bytes = utf8Length(newName);
    const tooLong = `body.new_username is ${bytes} bytes long, more than the ${MAX_NAME_BYTES} the sandbox keeps of a user name`;
    if (bytes > MAX_NAME_BYTES) throw new SandboxError(413, tooLong, { own: true });
    if (world.users.some((other) => other !== user && same(other.login, newName)) || orgNamed(world, newName))
      throw refuse(422, `user already exists [name: ${newName}]`);
    const old = user.login;
    // The old name leads to the account from now on, unless only its case changed.
    if (!same(old, newName)) {
      world.redirects = world.redirects.filter((each) => each.name !== newName.toLowerCase());
      world.redirects.push({ name: old.toLowerCase(), user: user.id });
    }
    const moved = (url: string | undefined, prefix: string): string | undefined => {
      if (url === undefined || !URL.canParse(url)) return url;
      const target = new URL(url);
      const [head, ...rest] = target.pathname.slice(prefix.length).split('/').slice(1);
      if (!target.pathname.startsWith(`${prefix}/`) || head !== old) return url;
      target.pathname = [prefix, newName, ...rest].join('/');
      return target.href;
    };
    Object.assign(user, { login: newName, username: newName, html_url: moved(user.html_url, '') });
    propagate(world, user);
    for (const repo of world.repos.filter((each) => each.owner.id === user.id)) {
      Object.assign(repo, {
        full_name: `${newName}/${repo.name}`,
        html_url: moved(repo.html_url, ''),
        clone_url: moved(repo.clone_url, ''),
        url: moved(repo.url, '/api/v1/repos'),
        languages_url: moved(repo.languages_url, '/api/v1/repos'),
        ssh_url: String(repo.ssh_url).replace(`:${old}/`, `:${newName}/`),
      });
    }
    return empty(204, true);
  }

  adminGetAllOrgs(call: Call): Reply {
    const orgs = [...call.world.orgs].sort((a, b) => a.name.localeCompare(b.name));
    return page(call, orgs);
  }

  repoAddCollaborator(call: Call): Reply {
    const repo = repoOf(call);
    const name = call.params.collaborator;
    // Gitea looks the name up among users and organizations alike, and takes either.
    const user = ownerNamed(call.world, name);
    if (!user) throw refuse(422, `user does not exist [uid: 0, name: ${name}]`);
    const permission = text(fieldsOf(call).permission) ?? 'write';
    const entry = call.world.collaborators.find((each) => each.repo === repo.id && each.user === user.id);
    if (entry) entry.permission = permission;
    else {
      call.world.created++;
      call.world.collaborators.push({ repo: repo.id, user: user.id, permission });
    }
    return empty(204, true);
  }
}

export const isOperation = (id: string): id is OperationId =>
  id !== 'constructor' && Object.hasOwn(GiteaBackend.prototype, id);
