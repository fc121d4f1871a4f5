// Events fired on demand (`POST /__sandbox/trigger`, `gitea-mock trigger`, MSW's `trigger()`): any of
// the document's 26 `webhooks:`, filled as Gitea's notifier fills them (services/webhook/notifier.go,
// modules/structs/hook.go) from the world's repository, owner, caller, issue or pull request, and from
// the event's example for what the world does not hold (a comment, a review, a release …). A push is
// one commit on the default branch, its id from the repository, branch and the pushes before it.
import { sha1 } from '@noble/hashes/legacy';
import { hex, utf8Bytes } from '../common/bytes.js';
import { Refusal } from '../common/refusal.js';
import { resolvePointer, type JsonObject } from '../contract/document.js';
import type { Rec, World } from './world.js';
import { copyJson } from './world-json.js';
import { anonymousUser, written, type HookEvent } from './payloads.js';

/** What the document says of one event type: its actions (none for push, create, delete, fork, status) and its first example's payload. */
interface EventTemplate {
  actions: readonly string[] | undefined;
  example: Rec;
}

export type EventTemplates = ReadonlyMap<string, EventTemplate>;

/** The event types of the document's `webhooks:` section, with their actions and example payloads. */
export function eventTemplates(document: Record<string, unknown>): EventTemplates {
  const resolve = (node: any): any =>
    typeof node?.$ref === 'string' ? resolvePointer(document as JsonObject, node.$ref) : node;
  const templates = new Map<string, EventTemplate>();
  for (const [type, item] of Object.entries<any>((document.webhooks as Record<string, unknown>) ?? {})) {
    const content = item?.post?.requestBody?.content?.['application/json'];
    const example = resolve(Object.values<any>(content?.examples ?? {})[0])?.value;
    if (typeof example !== 'object' || example === null) continue;
    // The event's own list narrows the payload's: it comes after the payload in `allOf`.
    const narrowed = [...(content.schema?.allOf ?? [])].reverse().map(resolve);
    const actions = (narrowed.find((part) => part?.properties?.action?.enum) ?? resolve(content.schema))?.properties
      ?.action?.enum;
    templates.set(type, { actions, example });
  }
  return templates;
}

export interface TriggerRequest {
  /** The event type, as `X-Gitea-Event-Type` names it. */
  event: string;
  action?: string;
  /** `owner/name`. */
  repository: string;
}

const sha = (text: string): string => hex(sha1(utf8Bytes(text)));

const ISSUE_EVENTS = new Set(['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment']);

/** Branches whose triggered pushes are remembered, in all worlds together. */
const MAX_PUSH_HEADS = 10_000;

/** The heads of the branches pushes were triggered on, per world key and repository, and how many. */
export type PushHeads = Map<string, { head: string; count: number }>;

/**
 * The event `request` asks for in `world`: its payload as Gitea writes it, with the repository and
 * the action checked. `caller` is who fires it; `host` names the no-reply addresses.
 */
export function triggeredEvent(
  templates: EventTemplates,
  world: World,
  request: TriggerRequest,
  context: { caller: Rec; host: string; key: string; heads: PushHeads },
): HookEvent {
  const template = templates.get(request.event);
  if (!template)
    throw new Refusal(
      422,
      `${JSON.stringify(request.event)} is not an event type Gitea sends; the document describes ${[...templates.keys()].join(', ')}`,
    );
  const { actions } = template;
  if (actions === undefined && request.action !== undefined)
    throw new Refusal(422, `${request.event} has no action; send none`);
  const action = request.action ?? (template.example.action as string | undefined);
  if (actions !== undefined && (action === undefined || !actions.includes(action)))
    throw new Refusal(
      422,
      `${JSON.stringify(request.action)} is not an action of ${request.event}; it has ${actions.join(', ')}`,
    );
  const [owner = '', name = ''] = request.repository.split('/');
  const repo = world.repos.find(
    (candidate) =>
      String(candidate.owner?.login).toLowerCase() === owner.toLowerCase() &&
      String(candidate.name).toLowerCase() === name.toLowerCase(),
  );
  if (!repo || request.repository.split('/').length !== 2)
    throw new Refusal(404, `no repository ${request.repository} in this credential's sandbox world`);

  const payload = copyJson(template.example);
  const sender = anonymousUser(context.caller, context.host);
  if (action !== undefined) payload.action = action;
  // A package's payload has no repository (`notifyPackage` leaves it out): it keeps its null.
  if (payload.repository) payload.repository = repo;
  if ('sender' in payload) payload.sender = sender;
  // `organization` is the owner as a user (repository events) or as an organization (packages, Actions).
  if (payload.organization && 'login' in payload.organization)
    payload.organization = anonymousUser(repo.owner, context.host);
  else if (payload.organization)
    payload.organization = world.orgs.find((org) => org.id === repo.owner?.id) ?? payload.organization;
  const type = request.event;

  if (ISSUE_EVENTS.has(type)) {
    const issue = world.issues.find((entry) => entry.repo === repo.id)?.issue;
    if (!issue) throw new Refusal(422, `${request.repository} has no issue for a ${type} delivery`);
    payload.issue = issue;
    if ('number' in payload) payload.number = issue.number;
    if (payload.comment) payload.comment.issue_url = issue.url;
  } else if (type.startsWith('pull_request')) {
    const pull = world.pulls.find((entry) => entry.repo === repo.id)?.pull;
    if (!pull) throw new Refusal(422, `${request.repository} has no pull request for a ${type} delivery`);
    payload.pull_request = pull;
    if ('number' in payload) payload.number = pull.number;
    if (type === 'pull_request_sync' || 'commit_id' in payload) payload.commit_id = pull.head?.sha ?? '';
    if (payload.issue) Object.assign(payload.issue, { number: pull.number, title: pull.title, state: pull.state });
    if (payload.comment) payload.comment.pull_request_url = pull.html_url;
  } else if (type === 'fork') {
    // Gitea sends the fork to the hooks of the repository forked (`ForkRepository`): it is `forkee`.
    payload.forkee = repo;
    if (payload.repository) payload.repository = { ...payload.repository, parent: repo };
  } else if (type === 'package') {
    // The world's package of the repository's owner (what `notifyPackage` converts), when there is one.
    payload.package = world.packages.find((each) => each.owner?.id === repo.owner?.id) ?? payload.package;
  } else if (type === 'push') {
    Object.assign(payload, push(repo, sender, context));
  } else if (type === 'create' || type === 'delete') {
    if ('sha' in payload) payload.sha = sha(`${repo.full_name}\0${payload.ref}`);
  } else if (type === 'status') {
    const head = world.pulls.find((entry) => entry.repo === repo.id)?.pull.head?.sha;
    if (typeof head === 'string') {
      payload.sha = head;
      if (payload.commit) payload.commit.id = head;
    }
  }
  const json = written(payload, type);
  const ref = refOf(type, payload);
  return { type, action: action ?? '', repo: repo.id, json, ...(ref === undefined ? {} : { ref }) };
}

/** The reference a hook's branch filter is matched with (services/webhook/webhook.go `getPayloadRef`). */
function refOf(type: string, payload: Rec): string | undefined {
  if (type === 'push') return String(payload.ref);
  if (type !== 'create' && type !== 'delete') return undefined;
  if (payload.ref_type === 'branch') return `refs/heads/${payload.ref}`;
  return payload.ref_type === 'tag' ? `refs/tags/${payload.ref}` : undefined;
}

/** A push of one commit onto the repository's default branch, after the pushes triggered before it. */
function push(repo: Rec, sender: Rec, context: { key: string; heads: PushHeads }): Rec {
  const branch = String(repo.default_branch || 'main');
  const where = `${context.key}\0${repo.id}\0${branch}`;
  const last = context.heads.get(where) ?? { head: sha(`${repo.full_name}\0${branch}\0seed`), count: 0 };
  const count = last.count + 1;
  const after = sha(`${repo.full_name}\0${branch}\0${count}`);
  context.heads.delete(where);
  context.heads.set(where, { head: after, count });
  // The branches pushed to least recently are forgotten first: their next push starts afresh.
  for (const oldest of context.heads.keys()) {
    if (context.heads.size <= MAX_PUSH_HEADS) break;
    context.heads.delete(oldest);
  }
  const person = { name: sender.full_name || sender.login, email: sender.email, username: sender.login };
  const commit = {
    id: after,
    message: `Triggered push ${count} to ${branch}\n`,
    url: `${repo.html_url}/commit/${after}`,
    author: person,
    committer: person,
    verification: null,
    timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    added: [],
    removed: [],
    modified: ['README.md'],
  };
  return {
    ref: `refs/heads/${branch}`,
    before: last.head,
    after,
    compare_url: `${repo.html_url}/compare/${last.head}...${after}`,
    commits: [commit],
    total_commits: 1,
    head_commit: commit,
    pusher: sender,
    sender,
  };
}
