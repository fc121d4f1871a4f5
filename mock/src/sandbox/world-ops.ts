// The twenty operations against a sandbox world, each as a Gitea 1.27 server answers it (the
// handlers at commit f26f71f1b2; README "How the document is kept"): lookups, merges, the server's
// quirks (repoEditHook resets omitted events to push, orgEditLabel un-archives when is_archived is
// omitted, issueEditMilestone clears an omitted deadline), `null` read as a field left out, and its
// error answers. A handler changes the world in one synchronous step and says whether it did, so
// the sandbox knows when to save; one that says it did not has left the world as it found it, as
// the sandbox applies the writes that arrive together to one copy.
import { sha1 } from '@noble/hashes/legacy';
import { hex, randomBytes, randomUuid, utf8Bytes, utf8Length, utf8Text } from '../common/bytes.js';
import { apiError, notFound } from '../front/errors.js';
import { goDecimal } from '../front/lenient.js';
import type { FormPart } from '../front/multipart.js';
import { sniffedType, type MarkdownRenderer } from './markdown-inline.js';
import { paginate } from '../examples/pagination.js';
import type { Answer } from '../front/answer-source.js';
import { isLabel, isMilestone, isUser, propagate, type Rec, type Templates, type World } from './world.js';

/** The alphabet of Gitea's OAuth2 client secrets. */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

interface OpContext {
  world: World;
  templates: Templates;
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  body: unknown;
  /** A multipart/form-data body, as its parts, in place of `body`. */
  form?: readonly FormPart[];
  /** The request's URL as the client addressed it: new records get URLs on this host. */
  url: URL;
  docsUrl: string;
  /** The caller: the Basic user name when it names a user of the world, else alice. */
  caller: Rec;
  /** renderMarkdown's renderer, bounded (markdown-inline.ts). */
  render: MarkdownRenderer['render'];
}

interface OpResult {
  answer: Answer;
  changed: boolean;
}

type Handler = (ctx: OpContext) => OpResult | Promise<OpResult>;

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Longest new user name: a name is copied wherever its user appears, into every URL of their repositories too. */
const MAX_NAME_BYTES = 255;

/** Most bytes of a secret's value (`SecretDataMaxLength`). */
const MAX_SECRET_BYTES = 65_536;

/** Where a credential's world goes back to the seed. */
export const RESET_PATH = '/__sandbox/reset';

/** Now, as Gitea writes times: RFC 3339 in seconds. */
function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A date-time kept as its date only, at 23:59:59 (Gitea's deadlines). */
function endOfDay(value: string): string {
  return `${value.slice(0, 10)}T23:59:59Z`;
}

/** Go's zero time, which Gitea reads as "no deadline". */
function isZeroTime(value: string): boolean {
  return Date.parse(value) === Date.parse(ZERO_TIME);
}

function freshId(world: World): number {
  world.created++;
  return world.nextId++;
}

const ARMOUR_BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----';
const ARMOUR_END = '-----END PGP PUBLIC KEY BLOCK-----';

/** What lies between the first armour's begin and end lines, or undefined; by indexOf, linear in the text however many begin lines it repeats. */
function armouredPayload(text: string): string | undefined {
  const begin = text.indexOf(ARMOUR_BEGIN);
  const end = begin < 0 ? -1 : text.indexOf(ARMOUR_END, begin + ARMOUR_BEGIN.length);
  return end < 0 ? undefined : text.slice(begin + ARMOUR_BEGIN.length, end);
}

const json = (status: number, body: unknown, headers?: Record<string, string>): Answer => ({
  status,
  type: 'application/json',
  body,
  ...(headers ? { headers } : {}),
});
const ok = (status: number, body: unknown, changed = false): OpResult => ({ answer: json(status, body), changed });
const empty = (status: number, changed: boolean): OpResult => ({ answer: { status }, changed });
const fail = (ctx: OpContext, status: number, message: string): OpResult => ok(status, apiError(ctx.docsUrl, message));
const missing = (ctx: OpContext): OpResult => ok(404, notFound(ctx.docsUrl));
/** A sandbox limit, not an answer of the API: not held to the document. */
const tooLarge = (ctx: OpContext, message: string): OpResult => ({
  answer: { ...json(413, apiError(ctx.docsUrl, message)), own: true },
  changed: false,
});
/** What Gitea answers when a handler crashes: a plain-text 500, whatever it changed before. */
const crash = (changed: boolean): OpResult => ({
  answer: { status: 500, type: 'text/plain', body: 'Internal Server Error' },
  changed,
});

const same = (a: unknown, b: unknown): boolean =>
  typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
const fieldsOf = (ctx: OpContext): Rec => (typeof ctx.body === 'object' && ctx.body !== null ? (ctx.body as Rec) : {});
const has = (body: Rec, name: string): boolean => Object.hasOwn(body, name) && body[name] !== null;

function userNamed(world: World, login: unknown): Rec | undefined {
  return world.users.find((user) => same(user.login, login));
}

function repoOf(ctx: OpContext): Rec | undefined {
  return ctx.world.repos.find((repo) => same(repo.owner?.login, ctx.params.owner) && same(repo.name, ctx.params.repo));
}

/** Gitea's answer when the repository in the path is unknown: an unknown owner names itself. */
function missingRepo(ctx: OpContext): OpResult {
  const owner = String(ctx.params.owner);
  const known = userNamed(ctx.world, owner) ?? ctx.world.orgs.find((org) => same(org.name, owner));
  if (known) return missing(ctx);
  return ok(404, {
    errors: [`user redirect does not exist [name: ${owner.toLowerCase()}]`],
    message: 'GetUserByName',
    url: ctx.docsUrl,
  });
}

/**
 * The 307 Gitea answers when the owner named in the path is an old name of a renamed user: the
 * same request under the new name, with a relative Location (the path's first occurrence of the
 * old name replaced, the query kept). Undefined when the name is current or was never renamed.
 */
export function ownerRedirect(world: World, params: Record<string, string>, url: URL): Answer | undefined {
  const name = params.owner ?? params.username ?? params.org;
  if (name === undefined || userNamed(world, name) || world.orgs.some((org) => same(org.name, name))) return undefined;
  const redirect = world.redirects.find((entry) => entry.name === name.toLowerCase());
  const user = redirect && world.users.find((candidate) => candidate.id === redirect.user);
  if (!user) return undefined;
  const location = url.pathname.replace(encodeURIComponent(name), encodeURIComponent(String(user.login))) + url.search;
  return { status: 307, headers: { Location: location } };
}

/** A list answer paged as Gitea pages it. */
function page(ctx: OpContext, all: unknown[]): OpResult {
  const { items, headers } = paginate(all, ctx.url);
  return { answer: json(200, items, headers), changed: false };
}

/** issueRemoveAssignees on a pull request's index: the pull request as an issue. */
function pullAsIssue(pull: Rec, repo: Rec): Rec {
  const issue: Rec = {};
  for (const name of [
    'id',
    'url',
    'html_url',
    'number',
    'user',
    'title',
    'body',
    'labels',
    'milestone',
    'assignee',
    'assignees',
    'state',
    'is_locked',
    'comments',
    'created_at',
    'updated_at',
    'closed_at',
    'due_date',
    'pin_order',
    'content_version',
  ]) {
    if (name in pull) issue[name] = pull[name];
  }
  return {
    ...issue,
    url: String(pull.url).replace(/\/pulls\/(\d+)$/, '/issues/$1'),
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

/** Users for a list of names, or the name that is not one. */
function usersNamed(world: World, names: unknown[]): { users: Rec[] } | { unknown: string } {
  const users: Rec[] = [];
  for (const name of names) {
    const user = userNamed(world, name);
    if (!user) return { unknown: String(name) };
    if (!users.includes(user)) users.push(user);
  }
  return { users };
}

/** A User-shaped owner for an organization, as repositories show their owners: the world's, or a new one for the caller to keep. */
function ownerView(world: World, org: Rec, url: URL): Rec {
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

/** A colour as Gitea repeats it in its refusal: trimmed, lower-cased, with `#` added to three or six characters. */
function colorAsWritten(color: string): string {
  const text = color.trim().toLowerCase();
  return text.length === 3 || text.length === 6 ? `#${text}` : text;
}

/** Gitea's label colours: three or six hex digits, with or without `#`; `#abc` means `#aabbcc`. */
function normalizeColor(color: string): string | undefined {
  const hex = color.trim().toLowerCase().replace(/^#/, '');
  if (/^[0-9a-f]{3}$/.test(hex)) return hex.replace(/./g, '$&$&');
  return /^[0-9a-f]{6}$/.test(hex) ? hex : undefined;
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

/** The first value of a query parameter, as Go's `FormValue` reads it. */
function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Gitea's webhook addresses: an absolute `http` or `https` URL (`validation.IsValidURL`). */
function isHookUrl(value: string): boolean {
  return URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);
}

const HOOK_CONTENT_TYPES = ['json', 'form'];
const ISSUE_SUB_EVENTS = ['issue_assign', 'issue_label', 'issue_milestone', 'issue_comment'];
const PULL_REQUEST_SUB_EVENTS = [
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_review_request',
  'pull_request_sync',
];
/** The events Gitea sets for each name it reads (`issues` and `pull_request` stand for their sub-events). */
const HOOK_EVENTS: Record<string, string[]> = {
  issues: ['issues', ...ISSUE_SUB_EVENTS],
  issues_only: ['issues'],
  pull_request: ['pull_request', ...PULL_REQUEST_SUB_EVENTS],
  pull_request_only: ['pull_request'],
};
/** The names that set only themselves. */
const PLAIN_HOOK_EVENTS = [
  'create',
  'push',
  'delete',
  'fork',
  'repository',
  'wiki',
  'release',
  'package',
  'status',
  'workflow_run',
  'workflow_job',
  ...ISSUE_SUB_EVENTS,
  ...PULL_REQUEST_SUB_EVENTS,
];

/** What Slack hooks keep besides the address (`SlackMeta`), all set together when `channel` is sent. */
const SLACK_CONFIG = ['channel', 'username', 'icon_url', 'color'] as const;

/**
 * A hook's config after an edit, as Gitea keeps and answers it (routers/api/v1/utils/hook.go
 * `editHook`, services/webhook/general.go `ToHook`): `url` and `content_type`, and Slack's
 * settings; any other key, `secret` and `http_method` among them, is dropped.
 */
function hookConfig(hook: Rec, sent: Record<string, string>): Record<string, string> {
  const kept = (hook.config ?? {}) as Record<string, string>;
  const config: Record<string, string> = {
    url: sent.url ?? kept.url ?? '',
    content_type: sent.content_type ?? kept.content_type ?? 'json',
  };
  if (hook.type !== 'slack') return config;
  for (const name of SLACK_CONFIG) config[name] = sent.channel === undefined ? (kept[name] ?? '') : (sent[name] ?? '');
  return config;
}

/** A hook's events after an edit: names matched without regard to case, unknown names dropped, none at all meaning push. */
function hookEvents(names: unknown): string[] {
  if (!Array.isArray(names) || names.length === 0) return ['push'];
  const events = new Set<string>();
  for (const name of names.map((value) => String(value).toLowerCase())) {
    for (const event of HOOK_EVENTS[name] ?? (PLAIN_HOOK_EVENTS.includes(name) ? [name] : [])) events.add(event);
  }
  return [...events];
}

const handlers: Record<string, Handler> = {
  repoEditHook(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const entry = ctx.world.hooks.find(
      (candidate) => candidate.repo === repo.id && candidate.hook.id === goDecimal(ctx.params.id),
    );
    if (!entry) return missing(ctx);
    const body = fieldsOf(ctx);
    const config = (has(body, 'config') ? body.config : {}) as Record<string, string>;
    if (config.url !== undefined && !isHookUrl(config.url)) return fail(ctx, 422, 'Invalid url');
    if (config.content_type !== undefined && !HOOK_CONTENT_TYPES.includes(config.content_type))
      return fail(ctx, 422, 'Invalid content type');
    const { hook } = entry;
    hook.config = hookConfig(hook, config);
    // As Gitea: no events means push only; branch_filter and the authorization header are
    // always replaced (cleared when omitted or null), and the header is answered in clear;
    // active and name only when sent.
    hook.events = hookEvents(body.events);
    hook.branch_filter = typeof body.branch_filter === 'string' ? body.branch_filter : '';
    hook.authorization_header = typeof body.authorization_header === 'string' ? body.authorization_header : '';
    if (typeof body.active === 'boolean') hook.active = body.active;
    if (typeof body.name === 'string') hook.name = body.name.trim();
    hook.updated_at = now();
    return ok(200, hook, true);
  },

  userCreateOAuth2Application(ctx) {
    const body = fieldsOf(ctx);
    if (typeof body.name !== 'string' || body.name === '') return fail(ctx, 422, '[Name]: Required');
    const uris = Array.isArray(body.redirect_uris) ? (body.redirect_uris as string[]) : [];
    if (uris.length === 0) return fail(ctx, 422, '[RedirectURIs]: Required');
    const invalid = uris.find((uri) => !URL.canParse(uri));
    if (invalid !== undefined) return fail(ctx, 400, `invalid redirect URI: ${invalid}`);
    const app: Rec = {
      ...ctx.templates.application,
      id: freshId(ctx.world),
      name: body.name,
      redirect_uris: uris,
      client_id: randomUuid(),
      confidential_client: body.confidential_client === true,
      skip_secondary_authorization: body.skip_secondary_authorization === true,
      created: now(),
    };
    delete app.client_secret;
    ctx.world.apps.push({ user: ctx.caller.id, app });
    // The secret exists in this answer only, as on a real server, in Gitea's shape: 52 characters
    // of lowercase base32, each a random byte modulo 32, so every letter is as likely.
    const secret = Array.from(randomBytes(52), (byte) => BASE32[byte % 32]).join('');
    return ok(201, { ...app, client_secret: `gto_${secret}` }, true);
  },

  repoMigrate(ctx) {
    const body = fieldsOf(ctx);
    const { world, url } = ctx;
    let owner: Rec | undefined;
    let ownerName: string;
    let isNewView = false;
    if (typeof body.repo_owner === 'string' && body.repo_owner !== '') {
      ownerName = body.repo_owner;
      const org = world.orgs.find((candidate) => same(candidate.name, ownerName));
      owner = org ? ownerView(world, org, url) : userNamed(world, ownerName);
      isNewView = org !== undefined && !world.owners.includes(owner!);
    } else if (typeof body.uid === 'number' && body.uid !== 0) {
      ownerName = '';
      owner = world.users.find((user) => user.id === body.uid) ?? world.owners.find((view) => view.id === body.uid);
    } else {
      owner = ctx.caller;
      ownerName = String(owner.login);
    }
    if (!owner)
      return fail(
        ctx,
        422,
        `user does not exist [uid: ${typeof body.uid === 'number' ? body.uid : 0}, name: ${ownerName}]`,
      );
    const clone = String(body.clone_addr);
    if (!URL.canParse(clone)) return fail(ctx, 422, 'The provided URL is invalid.');
    const name = String(body.repo_name);
    if (world.repos.some((repo) => repo.owner?.id === owner.id && same(repo.name, name)))
      return fail(ctx, 409, 'The repository with the same name already exists.');
    const fullName = `${owner.login}/${name}`;
    const at = now();
    const mirror = body.mirror === true;
    // A new owner view is kept only with the repository: a refused creation changes nothing.
    if (isNewView) world.owners.push(owner);
    const repo: Rec = {
      ...structuredClone(ctx.templates.repository),
      id: freshId(world),
      owner: structuredClone(owner),
      name,
      full_name: fullName,
      description: typeof body.description === 'string' ? body.description : '',
      private: body.private === true,
      mirror,
      mirror_interval: mirror ? (typeof body.mirror_interval === 'string' ? body.mirror_interval : '8h0m0s') : '',
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
    return ok(201, repo, true);
  },

  issueRemoveAssignees(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const index = goDecimal(ctx.params.index);
    const issue = ctx.world.issues.find((entry) => entry.repo === repo.id && entry.issue.number === index)?.issue;
    const pull = issue
      ? undefined
      : ctx.world.pulls.find((entry) => entry.repo === repo.id && entry.pull.number === index)?.pull;
    const target = issue ?? pull;
    if (!target) return fail(ctx, 404, `issue does not exist [id: 0, repo_id: ${repo.id}, index: ${index}]`);
    const names = Array.isArray(fieldsOf(ctx).assignees) ? (fieldsOf(ctx).assignees as unknown[]) : [];
    const found = usersNamed(ctx.world, names);
    if ('unknown' in found) return fail(ctx, 404, `user does not exist [uid: 0, name: ${found.unknown}]`);
    const removed = new Set(found.users.map((user) => user.id));
    const left = (target.assignees ?? []).filter((user: Rec) => !removed.has(user.id));
    target.assignee = left[0] ?? null;
    // An issue answers null when nobody is assigned; a pull request's own record keeps a list.
    target.assignees = issue && left.length === 0 ? null : left;
    target.updated_at = now();
    const answer = issue ?? pullAsIssue(target, repo);
    if (!issue && left.length === 0) answer.assignees = null;
    return ok(200, answer, true);
  },

  repoEditPullRequest(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const pull = ctx.world.pulls.find(
      (entry) => entry.repo === repo.id && entry.pull.number === goDecimal(ctx.params.index),
    )?.pull;
    if (!pull) return missing(ctx);
    const body = fieldsOf(ctx);
    const { world } = ctx;
    // Every check first: a refused edit changes nothing.
    if (has(body, 'content_version') && body.content_version !== pull.content_version)
      return fail(ctx, 409, 'the issue is already changed');
    if (has(body, 'state') && pull.merged)
      return fail(ctx, 412, 'cannot change state of this pull request, it was already merged');
    let assignees: Rec[] | undefined;
    if (has(body, 'assignees') || (typeof body.assignee === 'string' && body.assignee !== '')) {
      const names = [
        ...(typeof body.assignee === 'string' && body.assignee !== '' ? [body.assignee] : []),
        ...((body.assignees as unknown[] | undefined) ?? []),
      ];
      const found = usersNamed(world, names);
      if ('unknown' in found) return fail(ctx, 422, `Assignee does not exist: [name: ${found.unknown}]`);
      assignees = found.users;
    }
    let milestone: Rec | undefined;
    if (typeof body.milestone === 'number' && body.milestone !== 0) {
      milestone = world.milestones.find(
        (entry) => entry.repo === repo.id && entry.milestone.id === body.milestone,
      )?.milestone;
      // Gitea does not map this error: a 500 whose message non-administrators see empty.
      if (!milestone) return fail(ctx, 500, '');
    }
    if (typeof body.title === 'string' && body.title !== '') pull.title = body.title;
    // Only a new description bumps content_version, as Gitea's ChangeContent does.
    if (typeof body.body === 'string')
      Object.assign(pull, { body: body.body, content_version: Number(pull.content_version ?? 0) + 1 });
    // Gitea dereferences a missing due_date when unset_due_date is false: a crash after the
    // title and body were saved (it has no transaction).
    if (body.unset_due_date === false && !has(body, 'due_date')) return crash(true);
    if (typeof body.base === 'string' && body.base !== '')
      pull.base = { ...pull.base, ref: body.base, label: body.base };
    if (typeof body.allow_maintainer_edit === 'boolean') pull.allow_maintainer_edit = body.allow_maintainer_edit;
    if (assignees) {
      pull.assignees = structuredClone(assignees);
      pull.assignee = pull.assignees[0] ?? null;
    }
    if (Array.isArray(body.labels)) {
      const ids = new Set(body.labels as number[]);
      const owner = world.orgs.find((org) => org.id === repo.owner.id);
      const available = [
        ...world.repoLabels.filter((entry) => entry.repo === repo.id),
        ...world.orgLabels.filter((entry) => entry.org === owner?.id),
      ];
      // Unknown label ids are dropped, as Gitea drops them.
      pull.labels = structuredClone(available.filter((entry) => ids.has(entry.label.id)).map((entry) => entry.label));
    }
    if (milestone) pull.milestone = structuredClone(milestone);
    // The zero time removes the deadline, as unset_due_date does.
    if (typeof body.due_date === 'string') pull.due_date = isZeroTime(body.due_date) ? null : endOfDay(body.due_date);
    if (body.unset_due_date === true) pull.due_date = null;
    const at = now();
    if (body.state === 'closed' && pull.state !== 'closed') Object.assign(pull, { state: 'closed', closed_at: at });
    if (body.state === 'open') Object.assign(pull, { state: 'open', closed_at: null });
    pull.updated_at = at;
    // Gitea answers an edit with 201.
    return ok(201, pull, true);
  },

  userCurrentPostGPGKey(ctx) {
    const body = fieldsOf(ctx);
    const armored = String(body.armored_public_key ?? '').trim();
    // Signatures are not checked: any signature counts as a valid one, which makes the key verified.
    const signed = typeof body.armored_signature === 'string' && body.armored_signature.trim() !== '';
    const payload = armouredPayload(armored);
    if (payload === undefined) return fail(ctx, 422, 'Failed to parse GPG key: no armored PGP public key block');
    if (ctx.world.gpgKeys.some((entry) => entry.armored === armored))
      return fail(ctx, 422, 'A key with the same id already exists');
    const at = now();
    const base64 = payload
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.includes(':') && !line.startsWith('='))
      .join('')
      .trim();
    const sample = armored === ctx.templates.sampleArmoredKey.trim();
    // Keys are not parsed: the sample key answers its documented record; any other gets an id derived from its bytes.
    const key: Rec = sample
      ? { ...structuredClone(ctx.templates.gpgKey), id: freshId(ctx.world), created_at: at, verified: signed }
      : {
          ...structuredClone(ctx.templates.gpgKey),
          id: freshId(ctx.world),
          key_id: hex(sha1(utf8Bytes(base64)))
            .slice(-16)
            .toUpperCase(),
          // Armored, as the service description has it (Gitea itself sends the bare base64).
          public_key: `${armored}\n`,
          emails: [{ email: ctx.caller.email, verified: true }],
          subkeys: [],
          verified: signed,
          created_at: at,
        };
    // Gitea builds subkeys without their lists: both are null, and a subkey is never verified.
    for (const subkey of key.subkeys ?? [])
      Object.assign(subkey, { id: freshId(ctx.world), created_at: at, emails: null, subkeys: null, verified: false });
    ctx.world.gpgKeys.push({ user: ctx.caller.id, armored, key });
    return ok(201, key, true);
  },

  listPackageVersions(ctx) {
    const { owner, type, name } = ctx.params;
    if (!userNamed(ctx.world, owner) && !ctx.world.orgs.some((org) => same(org.name, owner)))
      return fail(ctx, 404, `user redirect does not exist [name: ${String(owner).toLowerCase()}]`);
    // The package is looked up first, by its name in any case: an unknown one is a 404.
    const versions = ctx.world.packages.filter(
      (pkg) => same(pkg.owner?.login, owner) && pkg.type === type && same(pkg.name, name),
    );
    if (versions.length === 0) return fail(ctx, 404, 'GetPackageByName: package does not exist');
    return page(ctx, versions);
  },

  notifyReadThread(ctx) {
    const id = goDecimal(ctx.params.id);
    const thread = ctx.world.threads.find((candidate) => candidate.id === id);
    if (!thread) return fail(ctx, 404, `notification does not exist [id: ${id}]`);
    const wanted = String(firstOf(ctx.query['to-status']) ?? 'read')
      .trim()
      .toLowerCase();
    // One status of three; anything else means read.
    thread.unread = wanted === 'unread';
    thread.pinned = wanted === 'pinned';
    thread.updated_at = now();
    return ok(205, thread, true);
  },

  repoGetKey(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const key = ctx.world.deployKeys.find(
      (entry) => entry.repo === repo.id && entry.key.id === goDecimal(ctx.params.id),
    )?.key;
    return key ? ok(200, key) : missing(ctx);
  },

  orgEditLabel(ctx) {
    const org = ctx.world.orgs.find((candidate) => same(candidate.name, ctx.params.org));
    if (!org)
      return ok(404, {
        errors: [`user redirect does not exist [name: ${String(ctx.params.org).toLowerCase()}]`],
        message: 'GetOrgByName',
        url: ctx.docsUrl,
      });
    const label = ctx.world.orgLabels.find(
      (entry) => entry.org === org.id && entry.label.id === goDecimal(ctx.params.id),
    )?.label;
    if (!label) return missing(ctx);
    const body = fieldsOf(ctx);
    let color: string | undefined;
    if (typeof body.color === 'string') {
      color = normalizeColor(body.color);
      if (color === undefined) return fail(ctx, 422, `invalid color: ${colorAsWritten(body.color)}`);
    }
    if (color !== undefined) label.color = color;
    if (typeof body.name === 'string') label.name = body.name;
    if (typeof body.description === 'string') label.description = body.description;
    if (typeof body.exclusive === 'boolean') label.exclusive = body.exclusive;
    // As Gitea: an omitted is_archived un-archives the label.
    label.is_archived = body.is_archived === true;
    propagate(ctx.world, label, isLabel);
    return ok(200, label, true);
  },

  async renderMarkdown(ctx) {
    const body = fieldsOf(ctx);
    const mode =
      body.Wiki === true ? 'wiki' : typeof body.Mode === 'string' && body.Mode !== '' ? body.Mode : 'markdown';
    // /markdown has no file to take an extension from: Gitea finds no renderer for `file`.
    if (mode === 'file')
      return { answer: { status: 422, type: 'text/plain', body: 'unable to find a render\n' }, changed: false };
    const text = typeof body.Text === 'string' ? body.Text : '';
    // Gitea writes nothing, so the answer has neither body nor media type.
    if (text === '') return { answer: { status: 200 }, changed: false };
    const users = ctx.world.users.map((user) => String(user.login).toLowerCase());
    const rendered = await ctx.render({
      text,
      mode,
      context: typeof body.Context === 'string' ? body.Context : undefined,
      origin: ctx.url.origin,
      users,
    });
    if (!rendered.ok) {
      const retry = rendered.status === 503 ? { 'Retry-After': String(rendered.retryAfter) } : undefined;
      return {
        answer: { ...json(rendered.status, apiError(ctx.docsUrl, rendered.message), retry), own: true },
        changed: false,
      };
    }
    return { answer: { status: 200, type: sniffedType(rendered.html), body: rendered.html }, changed: false };
  },

  orgListTeamMembers(ctx) {
    const team = ctx.world.teams.find((entry) => entry.team.id === goDecimal(ctx.params.id));
    if (!team) return missing(ctx);
    return page(ctx, team.members.map((id) => ctx.world.users.find((user) => user.id === id)).filter(Boolean));
  },

  ActionsGetWorkflow(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const workflow = ctx.world.workflows.find(
      (entry) => entry.repo === repo.id && entry.workflow.id === ctx.params.workflow_id,
    )?.workflow;
    return workflow ? ok(200, workflow) : fail(ctx, 404, `workflow "${ctx.params.workflow_id}" not found`);
  },

  updateUserSecret(ctx) {
    // The front refuses a name Gitea refuses (front/name-rules.ts), as the document's pattern says.
    const name = String(ctx.params.secretname).toUpperCase();
    const data = fieldsOf(ctx).data;
    if (typeof data === 'string' && utf8Length(data) > MAX_SECRET_BYTES) return fail(ctx, 400, 'data too long');
    const exists = ctx.world.secrets.some((secret) => secret.user === ctx.caller.id && secret.name === name);
    if (exists) return empty(204, false);
    ctx.world.created++;
    ctx.world.secrets.push({ user: ctx.caller.id, name });
    return empty(201, true);
  },

  issueEditMilestone(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const inRepo = ctx.world.milestones.filter((entry) => entry.repo === repo.id).map((entry) => entry.milestone);
    const id = parseGoInt(ctx.params.id ?? '');
    // By id when the number is one, else by exact title, as Gitea looks it up.
    const milestone =
      (id ? inRepo.find((candidate) => candidate.id === id) : undefined) ??
      inRepo.find((candidate) => candidate.title === ctx.params.id);
    if (!milestone) return missing(ctx);
    const body = fieldsOf(ctx);
    const at = now();
    // A title of spaces passes Gitea's "not empty" test and is then trimmed away.
    if (typeof body.title === 'string' && body.title !== '') milestone.title = body.title.trim();
    if (typeof body.description === 'string') milestone.description = body.description;
    if (typeof body.state === 'string') {
      if (body.state === 'closed') {
        if (milestone.state !== 'closed') Object.assign(milestone, { state: 'closed', closed_at: at });
      } else Object.assign(milestone, { state: 'open', closed_at: null });
    }
    // As Gitea: no due_on (or null, the zero time, the epoch) clears the deadline.
    const due = typeof body.due_on === 'string' ? Date.parse(body.due_on) : Number.NaN;
    milestone.due_on =
      typeof body.due_on === 'string' && due !== 0 && !isZeroTime(body.due_on) ? endOfDay(body.due_on) : null;
    milestone.updated_at = at;
    propagate(ctx.world, milestone, isMilestone);
    return ok(200, milestone, true);
  },

  async repoCreateReleaseAttachment(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const release = ctx.world.releases.find((entry) => entry.repo === repo.id && entry.id === goDecimal(ctx.params.id));
    if (!release) return missing(ctx);
    const queryName = firstOf(ctx.query.name) || undefined;
    let name: string;
    let size: number;
    if (ctx.form) {
      const file = ctx.form.find((part) => part.name === 'attachment');
      // Gitea does not map a missing file part: a 500 whose message non-administrators see empty.
      if (file?.filename === undefined) return fail(ctx, 500, '');
      const field = ctx.form.find((part) => part.name === 'name');
      const fieldName = field && field.filename === undefined ? utf8Text(field.data) : '';
      name = queryName ?? (fieldName !== '' ? fieldName : file.filename);
      size = file.data.length;
    } else {
      // Any other body is the file itself, and only the query can name it.
      if (queryName === undefined) return fail(ctx, 400, 'Could not determine name of attachment.');
      name = queryName;
      size = typeof ctx.body === 'string' ? ctx.body.length : 0;
    }
    const uuid = randomUuid();
    const attachment: Rec = {
      id: freshId(ctx.world),
      name,
      size,
      download_count: 0,
      created_at: now(),
      uuid,
      browser_download_url: `${ctx.url.origin}/attachments/${uuid}`,
    };
    release.attachments.push(attachment);
    return ok(201, attachment, true);
  },

  issueListIssueCommentAttachments(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    const comment = ctx.world.comments.find((entry) => entry.id === goDecimal(ctx.params.id));
    // An unknown comment is answered with the JSON literal null.
    if (!comment) return ok(404, null);
    if (comment.repo !== repo.id) return fail(ctx, 404, 'no matching issue comment found');
    return ok(200, comment.attachments);
  },

  adminRenameUser(ctx) {
    const user = userNamed(ctx.world, ctx.params.username);
    if (!user) {
      if (ctx.world.orgs.some((org) => same(org.name, ctx.params.username)))
        return fail(ctx, 422, `${ctx.params.username} is an organization not a user`);
      return fail(ctx, 404, `user redirect does not exist [name: ${String(ctx.params.username).toLowerCase()}]`);
    }
    // A name Gitea refuses never gets here: the front answers it (front/name-rules.ts).
    const newName = String(fieldsOf(ctx).new_username);
    if (newName === user.login) return empty(204, false);
    const nameBytes = utf8Length(newName);
    if (nameBytes > MAX_NAME_BYTES)
      return tooLarge(
        ctx,
        `body.new_username is ${nameBytes} bytes long, more than the ${MAX_NAME_BYTES} the sandbox keeps of a user name`,
      );
    const taken =
      ctx.world.users.some((other) => other !== user && same(other.login, newName)) ||
      ctx.world.orgs.some((org) => same(org.name, newName));
    if (taken) return fail(ctx, 422, `user already exists [name: ${newName}]`);
    const old = String(user.login);
    // The old name leads to the account from now on, unless only its case changed.
    if (!same(old, newName)) {
      ctx.world.redirects = ctx.world.redirects.filter((entry) => entry.name !== newName.toLowerCase());
      ctx.world.redirects.push({ name: old.toLowerCase(), user: Number(user.id) });
    }
    /** `url` with the owner segment after `prefix` renamed. */
    const moved = (url: unknown, prefix: string): unknown => {
      if (typeof url !== 'string' || !URL.canParse(url)) return url;
      const target = new URL(url);
      const [head, ...rest] = target.pathname.slice(prefix.length).split('/').slice(1);
      if (!target.pathname.startsWith(`${prefix}/`) || head !== old) return url;
      target.pathname = [prefix, newName, ...rest].join('/');
      return target.href;
    };
    Object.assign(user, { login: newName, username: newName, html_url: moved(user.html_url, '') });
    propagate(ctx.world, user, isUser);
    // The user's own repositories move with the name.
    for (const repo of ctx.world.repos.filter((candidate) => candidate.owner?.id === user.id)) {
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
  },

  adminGetAllOrgs(ctx) {
    return page(
      ctx,
      [...ctx.world.orgs].sort((a, b) => String(a.name).localeCompare(String(b.name))),
    );
  },

  repoAddCollaborator(ctx) {
    const repo = repoOf(ctx);
    if (!repo) return missingRepo(ctx);
    // Gitea looks the name up among users and organizations alike, and takes either.
    const user =
      userNamed(ctx.world, ctx.params.collaborator) ??
      ctx.world.orgs.find((org) => same(org.name, ctx.params.collaborator));
    if (!user) return fail(ctx, 422, `user does not exist [uid: 0, name: ${ctx.params.collaborator}]`);
    const permission = typeof fieldsOf(ctx).permission === 'string' ? String(fieldsOf(ctx).permission) : 'write';
    const entry = ctx.world.collaborators.find((candidate) => candidate.repo === repo.id && candidate.user === user.id);
    if (entry) entry.permission = permission;
    else {
      ctx.world.created++;
      ctx.world.collaborators.push({ repo: repo.id, user: user.id, permission });
    }
    return empty(204, true);
  },
};

/** Operations that only read the world: answered from it as it is, without a copy. */
export const READ_ONLY = new Set([
  'listPackageVersions',
  'repoGetKey',
  'renderMarkdown',
  'orgListTeamMembers',
  'ActionsGetWorkflow',
  'issueListIssueCommentAttachments',
  'adminGetAllOrgs',
]);

/** The handler of an operation, by operationId. */
export function handlerFor(operationId: string): Handler | undefined {
  return handlers[operationId];
}
