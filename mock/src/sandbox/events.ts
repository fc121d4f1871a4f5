// The webhook events a write causes, and their payloads, read from the records before and after the write:
// routers/api/v1/repo/pull.go `EditPullRequest`, `DeleteIssueAssignees`, `Migrate`; services/webhook/notifier.go
// repoMigrate fires `repository` `created`; issueRemoveAssignees `issue_assign` (`pull_request_assign` on a pull
// request) `unassigned` per user removed; repoEditPullRequest, in the handler's order, a new title or any `body`
// `pull_request` `edited`, each assignee removed then added `pull_request_assign`, a new milestone `milestoned`, a new
// state `closed`/`reopened`, a new base `edited` (`changes.ref.from` holding the new branch, as Gitea fills it).
// Payloads follow modules/structs/hook.go: keys in the order of Go's structs, accounts as an anonymous visitor sees them.
import type { ChangesPayload, components, IssuePayload, PullRequestPayload, RepositoryPayload } from 'gitea-contract';
import { goDecimal } from '../front/lenient.js';
import type { Payload } from '../webhooks/request.js';
import { repoNamed } from './backend.js';
import type { Issue, PullRequest, Repository, User, World } from './world.js';
import { copyJson } from './world-json.js';

/** The event types the twenty operations cause, as `X-Gitea-Event-Type` names them. */
export const EVENT_TYPES = 'issue_assign pull_request pull_request_assign pull_request_milestone repository'.split(' ');

/** One event of a world: its payload, the repository whose hooks get it, and for create, delete and push its full git reference. */
export interface HookEvent extends Payload {
  repo: number;
  ref?: string;
}

/** `user` as Gitea shows an account to nobody in particular (`convert.ToUser` without a doer): a no-reply address on `host`. */
export const anonymousUser = (user: User, host: string): User => ({
  ...user,
  email: `${user.id}+${user.login.toLowerCase()}@noreply.${host}`,
  login_name: '',
  source_id: 0,
  language: '',
  is_admin: false,
  last_login: '0001-01-01T00:00:00Z',
  active: false,
  prohibit_login: false,
});

/** The JSON of a payload: indented by two spaces, and by one for repository events, as Gitea's JSONPayload writes them. */
export const written = (payload: object, type: string): string =>
  JSON.stringify(payload, null, type === 'repository' ? 1 : 2);

const eventOf = (type: string, payload: IssuePayload | PullRequestPayload | RepositoryPayload): HookEvent => ({
  type,
  action: payload.action,
  repo: payload.repository.id!,
  json: written(payload, type),
});

type Common = { repository: Repository; sender: User };
type Changes = Pick<ChangesPayload, 'title' | 'body' | 'ref'>;
const pullRequestEvent = (
  type: string,
  action: PullRequestPayload['action'],
  pull: PullRequest,
  common: Common,
  changes?: Changes,
): HookEvent =>
  eventOf(type, {
    action,
    number: pull.number,
    ...(changes && { changes: { ...changes, added_labels: null, removed_labels: null } }),
    pull_request: pull,
    requested_reviewer: null,
    ...common,
    commit_id: '',
    review: null,
  });

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
  if (repo === undefined) return undefined;
  if (issue)
    return operationId === 'issueRemoveAssignees'
      ? { operationId, repo, kind: 'issue', record: copyJson(issue) }
      : undefined;
  const pull = world.pulls.find((entry) => entry.repo === repo && entry.pull.number === index)?.pull;
  return pull && { operationId, repo, kind: 'pull', record: copyJson(pull) };
}

type Users = readonly components['schemas']['User'][] | null | undefined;
/** The users of `before` that `after` does not hold. */
function removed(before: Users, after: Users): components['schemas']['User'][] {
  const left = new Set((after ?? []).map((user) => user.id));
  return (before ?? []).filter((user) => !left.has(user.id));
}

/** `keys` of `record` as they are there. */
const pick = <K extends keyof PullRequest>(record: PullRequest, ...keys: K[]): Pick<PullRequest, K> =>
  Object.fromEntries(keys.map((key) => [key, record[key]])) as Pick<PullRequest, K>;

/** The events the write watched by `watched` caused, in the order Gitea sends them; `world` is as the write left it. */
export function eventsOf(watched: Watch, world: World, { caller, host }: { caller: User; host: string }): HookEvent[] {
  const sender = anonymousUser(caller, host);
  if (watched.operationId === 'repoMigrate') {
    const repository = world.repos.find((repo) => !watched.repos.has(repo.id));
    if (!repository) return [];
    return [
      eventOf('repository', {
        action: 'created',
        repository,
        organization: anonymousUser(repository.owner, host),
        sender,
      }),
    ];
  }
  const repository = world.repos.find((candidate) => candidate.id === watched.repo);
  if (!repository) return [];
  // Each event's payload is written out as JSON when it is made: the records need no copies.
  const common = { repository, sender };
  if (watched.kind === 'issue') {
    const before = watched.record;
    const now = world.issues.find((entry) => entry.repo === watched.repo && entry.issue.id === before.id)?.issue;
    const event =
      now &&
      eventOf('issue_assign', { action: 'unassigned', number: now.number, issue: now, ...common, commit_id: '' });
    return event ? removed(before.assignees, now.assignees).map(() => event) : [];
  }
  const before = watched.record;
  const now = world.pulls.find((entry) => entry.repo === watched.repo && entry.pull.id === before.id)?.pull;
  if (!now) return [];
  if (watched.operationId === 'issueRemoveAssignees')
    return removed(before.assignees, now.assignees).map(() =>
      pullRequestEvent('pull_request_assign', 'unassigned', now, common),
    );

  // repoEditPullRequest: the pull request as it stood at each event, `before` with the parts of `now` set by then.
  const events: HookEvent[] = [];
  let current: PullRequest = { ...before, ...pick(now, 'updated_at') };
  const step = (
    part: Partial<PullRequest>,
    fire?: [type: string, action: PullRequestPayload['action'], changes?: Changes],
  ) => {
    current = { ...current, ...part };
    if (fire) events.push(pullRequestEvent(fire[0], fire[1], current, common, fire[2]));
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
