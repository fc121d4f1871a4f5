// The webhook events the sandbox sends: those a write causes, read from its records before and after, and those fired on demand.
// routers/api/v1/repo/pull.go `EditPullRequest`, `DeleteIssueAssignees`, `Migrate`; services/webhook/notifier.go; modules/structs/hook.go (keys in the order of Go's structs)
import { sha1 } from '@noble/hashes/legacy';
import type { ChangesPayload, IssuePayload, PullRequestPayload, PushPayload } from 'gitea-contract';
import type { RepositoryPayload, WebhookName, WebhookPayload } from 'gitea-contract';
import { hex, utf8Bytes } from '../common/bytes.js';
import { Refusal } from '../common/refusal.js';
import { resolvePointer, type JsonObject, webhookActions } from '../contract/document.js';
import { goDecimal } from '../front/validation.js';
import type { Payload } from '../webhooks/deliveries.js';
import { now, repoNamed, ZERO_TIME } from './backend.js';
import type { Issue, PullRequest, Repository, User, World } from './world.js';
import { copyJson } from './world-json.js';

/** The event types the twenty operations cause, as `X-Gitea-Event-Type` names them. */
export const EVENT_TYPES = 'issue_assign pull_request pull_request_assign pull_request_milestone repository'.split(' ');

/** One event of a world: its payload, the repository whose hooks get it, and for create, delete and push its full git reference. */
export type HookEvent = Payload & { repo: number; ref?: string };

/** `user` as Gitea shows an account to nobody in particular (`convert.ToUser` without a doer): a no-reply address on `host`. */
const anonymousUser = (user: User, host: string): User => ({
  ...user,
  email: `${user.id}+${user.login.toLowerCase()}@noreply.${host}`,
  login_name: '',
  source_id: 0,
  language: '',
  is_admin: false,
  last_login: ZERO_TIME,
  active: false,
  prohibit_login: false,
});

/** The JSON of a payload: indented by two spaces, and by one for repository and wiki events, as Gitea's JSONPayload writes them. */
const written = (payload: object, type: string): string =>
  JSON.stringify(payload, null, type === 'repository' || type === 'wiki' ? 1 : 2);

const eventOf = (type: string, payload: IssuePayload | PullRequestPayload | RepositoryPayload): HookEvent => ({
  type,
  action: payload.action,
  repo: payload.repository.id!,
  json: written(payload, type),
});

type Changes = Pick<ChangesPayload, 'title' | 'body' | 'ref'>;
/** A pull request event's type, action and, for an edit, what changed. */
type Fired = [type: string, action: PullRequestPayload['action'], changes?: Changes];

/** What a write may change that a webhook reports, copied before the write. */
export type Watch =
  | { operationId: 'repoMigrate'; repos: Set<number> }
  | { operationId: 'issueRemoveAssignees'; repo: number; kind: 'issue'; record: Issue }
  | { operationId: 'issueRemoveAssignees' | 'repoEditPullRequest'; repo: number; kind: 'pull'; record: PullRequest };

/** What the write of `operationId` to `params` may change, as it is now; undefined for a write that fires nothing. */
export function watch(operationId: string, world: World, params: Record<string, string>): Watch | undefined {
  if (operationId === 'repoMigrate') return { operationId, repos: new Set(world.repos.map((repo) => repo.id)) };
  if (operationId !== 'issueRemoveAssignees' && operationId !== 'repoEditPullRequest') return undefined;
  const repo = repoNamed(world, params.owner, params.repo)?.id;
  const index = goDecimal(params.index);
  const issue = world.issues.find((entry) => entry.repo === repo && entry.issue.number === index)?.issue;
  // repoEditPullRequest on an issue's number fires nothing.
  if (repo === undefined || (issue && operationId === 'repoEditPullRequest')) return undefined;
  // A shallow copy: these two operations replace a record's fields and never change what a field holds, and the
  // payloads are written out (eventsOf) before another write runs.
  if (issue) return { operationId: 'issueRemoveAssignees', repo, kind: 'issue', record: { ...issue } };
  const pull = world.pulls.find((entry) => entry.repo === repo && entry.pull.number === index)?.pull;
  return pull && { operationId, repo, kind: 'pull', record: { ...pull } };
}

function removed(before: Issue['assignees'], after: Issue['assignees']) {
  const left = new Set((after ?? []).map((user) => user.id));
  return (before ?? []).filter((user) => !left.has(user.id));
}

const pick = <K extends keyof PullRequest>(record: PullRequest, ...keys: K[]): Pick<PullRequest, K> =>
  Object.fromEntries(keys.map((key) => [key, record[key]])) as Pick<PullRequest, K>;

/** The events the write watched by `watched` caused, in the order Gitea sends them; `world` is as the write left it. */
export function eventsOf(watched: Watch, world: World, { caller, host }: { caller: User; host: string }): HookEvent[] {
  const sender = anonymousUser(caller, host);
  if (watched.operationId === 'repoMigrate') {
    const repository = world.repos.find((repo) => !watched.repos.has(repo.id));
    if (!repository) return [];
    const organization = anonymousUser(repository.owner, host);
    return [eventOf('repository', { action: 'created', repository, organization, sender })];
  }
  const repository = world.repos.find((candidate) => candidate.id === watched.repo);
  if (!repository) return [];
  // Each event's payload is written out as JSON when it is made: the records need no copies.
  const common = { repository, sender, commit_id: '' };
  const pullEvent = (pull: PullRequest, ...[type, action, changes]: Fired) =>
    eventOf(type, {
      action,
      number: pull.number,
      ...(changes && { changes: { ...changes, added_labels: null, removed_labels: null } }),
      pull_request: pull,
      requested_reviewer: null,
      ...common,
      review: null,
    });
  if (watched.kind === 'issue') {
    const before = watched.record;
    const now = world.issues.find((entry) => entry.repo === watched.repo && entry.issue.id === before.id)?.issue;
    if (!now) return [];
    const event = eventOf('issue_assign', { action: 'unassigned', number: now.number, issue: now, ...common });
    return removed(before.assignees, now.assignees).map(() => event);
  }
  const before = watched.record;
  const now = world.pulls.find((entry) => entry.repo === watched.repo && entry.pull.id === before.id)?.pull;
  if (!now) return [];
  if (watched.operationId === 'issueRemoveAssignees')
    return removed(before.assignees, now.assignees).map(() => pullEvent(now, 'pull_request_assign', 'unassigned'));

  // repoEditPullRequest: the pull request as it stood at each event, `before` with the parts of `now` set by then.
  const events: HookEvent[] = [];
  let current: PullRequest = { ...before, ...pick(now, 'updated_at') };
  const step = (part: Partial<PullRequest>, fire?: Fired) => {
    current = { ...current, ...part };
    if (fire) events.push(pullEvent(current, ...fire));
  };
  if (now.title !== before.title)
    step(pick(now, 'title'), ['pull_request', 'edited', { title: { from: String(before.title) } }]);
  if (now.content_version !== before.content_version)
    step(pick(now, 'body', 'content_version'), ['pull_request', 'edited', { body: { from: before.body ?? '' } }]);
  step(pick(now, 'due_date'));
  let assignees = before.assignees ?? [];
  for (const user of removed(before.assignees, now.assignees)) {
    assignees = assignees.filter((each) => each.id !== user.id);
    step({ assignees, assignee: assignees[0] ?? null }, ['pull_request_assign', 'unassigned']);
  }
  const added = removed(now.assignees, before.assignees);
  for (const [index, user] of added.entries()) {
    assignees = index === added.length - 1 ? (now.assignees ?? []) : [...assignees, user];
    step({ assignees, assignee: assignees[0] ?? null }, ['pull_request_assign', 'assigned']);
  }
  step(pick(now, 'assignees', 'assignee'));
  if (now.milestone && now.milestone.id !== before.milestone?.id)
    step({ milestone: now.milestone }, ['pull_request_milestone', 'milestoned']);
  step(pick(now, 'labels'));
  if (now.state !== before.state)
    step(pick(now, 'state', 'closed_at'), ['pull_request', now.state === 'closed' ? 'closed' : 'reopened']);
  if (now.base?.ref !== before.base?.ref)
    step(pick(now, 'base'), ['pull_request', 'edited', { ref: { from: String(now.base?.ref) } }]);
  return events;
}

type Event = { [Name in WebhookName]: { type: Name; payload: WebhookPayload<Name> } }[WebhookName];

/** What the document says of one event type: its actions (none for push, create, delete, fork, status) and its first example's payload. */
type EventTemplate = { actions: readonly string[] | undefined; example: Event['payload'] };
export type EventTemplates = ReadonlyMap<string, EventTemplate>;

/** What is read of a webhook's JSON body in the document, any part of it a `$ref`. */
type Node = { $ref?: string; value?: unknown };
type Item = {
  post?: { requestBody?: { content?: Record<string, { examples?: Record<string, Node> }> } };
};

export function eventTemplates(document: Record<string, unknown>): EventTemplates {
  const resolve = (node: Node | undefined): Node | undefined =>
    typeof node?.$ref === 'string' ? (resolvePointer(document as JsonObject, node.$ref) as Node) : node;
  const templates = new Map<string, EventTemplate>();
  for (const [type, item] of Object.entries((document.webhooks ?? {}) as Record<string, Item>)) {
    const content = item.post?.requestBody?.content?.['application/json'];
    const example = resolve(Object.values(content?.examples ?? {})[0])?.value;
    if (typeof example !== 'object' || example === null) continue;
    const actions = webhookActions(document as JsonObject, type);
    templates.set(type, { actions, example: example as Event['payload'] });
  }
  return templates;
}

/** An event type as `X-Gitea-Event-Type` names it, its action, and the repository `owner/name`. */
export type TriggerRequest = { event: string; action?: string; repository: string };

const sha = (text: string): string => hex(sha1(utf8Bytes(text)));

/** Branches whose triggered pushes are remembered, in all worlds together. */
const MAX_PUSH_HEADS = 10_000;

/** The heads of the branches pushes were triggered on, per world key and repository, and how many. */
export type PushHeads = Map<string, { head: string; count: number }>;
/** Who fires an event, the host of the no-reply addresses, the world's key and the pushes triggered before. */
type Context = { caller: User; host: string; key: string; heads: PushHeads };

/** The event `request` asks for in `world`, as Gitea writes it, with the repository and the action checked; `caller` fires it. */
export function triggeredEvent(templates: EventTemplates, world: World, request: TriggerRequest, context: Context) {
  const unfit = (message: string) => new Refusal(422, message);
  const template = templates.get(request.event);
  if (!template)
    throw unfit(
      `${JSON.stringify(request.event)} is not an event type Gitea sends; the document describes ${[...templates.keys()].join(', ')}`,
    );
  const { actions, example } = template;
  if (actions === undefined && request.action !== undefined) throw unfit(`${request.event} has no action; send none`);
  const action = request.action ?? (example as { action?: string }).action;
  if (actions !== undefined && (action === undefined || !actions.includes(action)))
    throw unfit(`${JSON.stringify(request.action)} is not an action of ${request.event}; it has ${actions.join(', ')}`);
  const [owner = '', name = '', extra] = request.repository.split('/');
  const repo = extra === undefined ? repoNamed(world, owner, name) : undefined;
  if (!repo) throw new Refusal(404, `no repository ${request.repository} in this credential's sandbox world`);
  const sender = anonymousUser(context.caller, context.host);
  const event = { type: request.event, payload: copyJson(example) } as Event;
  const lacking = (what: string): never => {
    throw unfit(`${request.repository} has no ${what} for a ${event.type} delivery`);
  };
  const issue = () => world.issues.find((entry) => entry.repo === repo.id)?.issue ?? lacking('issue');
  const pull = () => world.pulls.find((entry) => entry.repo === repo.id)?.pull ?? lacking('pull request');

  if (action !== undefined) Object.assign(event.payload, { action });
  // A package's payload has no repository (`notifyPackage` leaves it out): it keeps its null.
  if (event.type !== 'package') event.payload.repository = repo;
  event.payload.sender = sender;
  switch (event.type) {
    case 'issue_comment':
      event.payload.issue = issue();
      event.payload.comment.issue_url = event.payload.issue.url ?? '';
      break;
    case 'pull_request_comment': {
      const found = pull();
      event.payload.pull_request = found;
      Object.assign(event.payload.issue, { number: found.number, title: found.title, state: found.state });
      event.payload.comment.pull_request_url = found.html_url;
      break;
    }
    case 'repository':
      // `organization` is the owner as a user here, and as an organization in packages and Actions.
      event.payload.organization = anonymousUser(repo.owner, context.host);
      break;
    case 'package':
    case 'workflow_job':
    case 'workflow_run':
      if (event.payload.organization)
        event.payload.organization = world.orgs.find((org) => org.id === repo.owner.id) ?? event.payload.organization;
      // The world's package of the repository's owner (what `notifyPackage` converts), when there is one.
      if (event.type === 'package')
        event.payload.package = world.packages.find((each) => each.owner.id === repo.owner.id) ?? event.payload.package;
      break;
    case 'fork':
      // Gitea sends the fork to the hooks of the repository forked (`ForkRepository`): it is `forkee`.
      event.payload.forkee = repo;
      event.payload.repository = { ...repo, parent: repo };
      break;
    case 'push':
      Object.assign(event.payload, push(repo, sender, context));
      break;
    case 'create':
      event.payload.sha = sha(`${repo.full_name}\0${event.payload.ref}`);
      break;
    case 'status': {
      const head = world.pulls.find((entry) => entry.repo === repo.id)?.pull.head?.sha;
      if (head !== undefined) event.payload.sha = event.payload.commit.id = head;
      break;
    }
    default:
      // The other issue and pull request events (`IssuePayload`, `PullRequestPayload`): release and wiki take nothing of the world.
      if (event.type.startsWith('issue')) {
        const found = issue();
        Object.assign(event.payload, { issue: found, number: found.number });
      } else if (event.type.startsWith('pull_request')) {
        const found = pull();
        Object.assign(event.payload, { pull_request: found, number: found.number, commit_id: found.head?.sha ?? '' });
      }
  }
  const ref = refOf(event);
  const json = written(event.payload, event.type);
  return { type: event.type, action: action ?? '', repo: repo.id, json, ...(ref === undefined ? {} : { ref }) };
}

/** The reference a hook's branch filter is matched with (services/webhook/webhook.go `getPayloadRef`). */
function refOf(event: Event): string | undefined {
  if (event.type === 'push') return event.payload.ref;
  if (event.type !== 'create' && event.type !== 'delete') return undefined;
  const { ref_type, ref } = event.payload;
  return ref_type === 'branch' ? `refs/heads/${ref}` : ref_type === 'tag' ? `refs/tags/${ref}` : undefined;
}

/** A push of one commit onto the repository's default branch, after the pushes triggered before it. */
function push(repo: Repository, sender: User, context: Context): Omit<PushPayload, 'repository'> {
  const branch = repo.default_branch || 'main';
  const where = `${context.key}\0${repo.id}\0${branch}`;
  const last = context.heads.get(where) ?? { head: sha(`${repo.full_name}\0${branch}\0seed`), count: 0 };
  const count = last.count + 1;
  const after = sha(`${repo.full_name}\0${branch}\0${count}`);
  context.heads.delete(where);
  context.heads.set(where, { head: after, count });
  // The branch pushed to least recently is forgotten (one a push, as one is added): its next push starts afresh.
  if (context.heads.size > MAX_PUSH_HEADS) context.heads.delete(context.heads.keys().next().value!);
  const person = { name: sender.full_name || sender.login, email: sender.email ?? '', username: sender.login };
  const commit = {
    id: after,
    message: `Triggered push ${count} to ${branch}\n`,
    url: `${repo.html_url}/commit/${after}`,
    author: person,
    committer: person,
    verification: null,
    timestamp: now(),
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
