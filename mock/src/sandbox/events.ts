// The webhook events a write causes, as Gitea's handlers and notifier cause them (routers/api/v1/repo/
// pull.go `EditPullRequest`, `DeleteIssueAssignees`, `Migrate`; services/webhook/notifier.go), read
// from the records before and after the write, so the backend (backend.ts) knows nothing of webhooks:
// - repoMigrate: `repository` `created`;
// - issueRemoveAssignees: per user removed, `issue_assign` (`pull_request_assign` on a pull request)
//   `unassigned`, each with the record after every removal;
// - repoEditPullRequest, in the handler's order, each with the pull request as it stood then: a new
//   title or any `body`, `pull_request` `edited`; each assignee removed, then added,
//   `pull_request_assign`; a new milestone `milestoned`; a new state `closed`/`reopened`; a new base
//   `edited` (`changes.ref.from` holding the new branch, as Gitea fills it). Labels, the deadline and
//   `allow_maintainer_edit` fire nothing.
import type { Rec, World } from './world.js';
import { copyJson } from './world-json.js';
import { anonymousUser, issueEvent, pullRequestEvent, repositoryEvent, type HookEvent } from './payloads.js';

/** What a write may change that a webhook reports, copied before the write. */
export type Watch =
  | { operationId: 'repoMigrate'; repos: Set<number> }
  | { operationId: 'issueRemoveAssignees' | 'repoEditPullRequest'; repo: number; kind: 'issue' | 'pull'; record: Rec };

const same = (a: unknown, b: unknown): boolean =>
  typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();

/** The repository, issue or pull request a write to `params` would change. */
function target(
  world: World,
  params: Record<string, string>,
): { repo: Rec; kind: 'issue' | 'pull'; record: Rec } | undefined {
  const repo = world.repos.find(
    (candidate) => same(candidate.owner?.login, params.owner) && same(candidate.name, params.repo),
  );
  if (!repo) return undefined;
  const index = Number(params.index);
  const issue = world.issues.find((entry) => entry.repo === repo.id && entry.issue.number === index)?.issue;
  if (issue) return { repo, kind: 'issue', record: issue };
  const pull = world.pulls.find((entry) => entry.repo === repo.id && entry.pull.number === index)?.pull;
  return pull ? { repo, kind: 'pull', record: pull } : undefined;
}

/** What the write of `operationId` to `params` may change, as it is now; undefined for a write that fires nothing. */
export function watch(operationId: string, world: World, params: Record<string, string>): Watch | undefined {
  if (operationId === 'repoMigrate') return { operationId, repos: new Set(world.repos.map((repo) => repo.id)) };
  if (operationId !== 'issueRemoveAssignees' && operationId !== 'repoEditPullRequest') return undefined;
  const found = target(world, params);
  if (!found || (operationId === 'repoEditPullRequest' && found.kind !== 'pull')) return undefined;
  return { operationId, repo: found.repo.id, kind: found.kind, record: copyJson(found.record) };
}

/** Who made the change and where: the caller, and the host the request named (for the no-reply addresses). */
export interface Doer {
  caller: Rec;
  host: string;
}

const ids = (users: unknown): number[] => (Array.isArray(users) ? users.map((user: Rec) => user.id) : []);

/** The events the write watched by `watched` caused, in the order Gitea sends them; `world` is as the write left it. */
export function eventsOf(watched: Watch, world: World, { caller, host }: Doer): HookEvent[] {
  const sender = anonymousUser(caller, host);
  if (watched.operationId === 'repoMigrate') {
    const created = world.repos.find((repo) => !watched.repos.has(repo.id));
    return created ? [repositoryEvent('created', created, anonymousUser(created.owner, host), sender)] : [];
  }
  const repo = world.repos.find((candidate) => candidate.id === watched.repo);
  const before = watched.record;
  const now: Rec | undefined =
    watched.kind === 'issue'
      ? world.issues.find((entry) => entry.repo === watched.repo && entry.issue.id === before.id)?.issue
      : world.pulls.find((entry) => entry.repo === watched.repo && entry.pull.id === before.id)?.pull;
  if (!repo || !now) return [];
  // Each event's payload is written out as JSON when it is made: the records need no copies.
  const common = { repository: repo, sender };

  if (watched.operationId === 'issueRemoveAssignees') {
    const left = new Set(ids(now.assignees));
    const removed = ids(before.assignees).filter((id) => !left.has(id));
    return removed.map(() =>
      watched.kind === 'issue'
        ? issueEvent('issue_assign', 'unassigned', now, common)
        : pullRequestEvent('pull_request_assign', 'unassigned', now, common),
    );
  }

  // repoEditPullRequest: the pull request rebuilt step by step from `before` towards `now`, a
  // field replaced at each step (never changed inside).
  const events: HookEvent[] = [];
  const current: Rec = { ...before, updated_at: now.updated_at };
  const fire = (
    type: Parameters<typeof pullRequestEvent>[0],
    action: string,
    changes?: Parameters<typeof pullRequestEvent>[4],
  ) => events.push(pullRequestEvent(type, action, current, common, changes));
  if (now.title !== before.title) {
    current.title = now.title;
    fire('pull_request', 'edited', { title: String(before.title) });
  }
  if (now.content_version !== before.content_version) {
    Object.assign(current, { body: now.body, content_version: now.content_version });
    fire('pull_request', 'edited', { body: String(before.body ?? '') });
  }
  current.due_date = now.due_date;
  const kept = new Set(ids(now.assignees));
  const had = new Set(ids(before.assignees));
  for (const user of (before.assignees ?? []) as Rec[]) {
    if (kept.has(user.id)) continue;
    current.assignees = (current.assignees as Rec[]).filter((each) => each.id !== user.id);
    current.assignee = current.assignees[0] ?? null;
    fire('pull_request_assign', 'unassigned');
  }
  const added = ((now.assignees ?? []) as Rec[]).filter((user) => !had.has(user.id));
  for (const [index, user] of added.entries()) {
    current.assignees = index === added.length - 1 ? now.assignees : [...current.assignees, user];
    current.assignee = current.assignees[0] ?? null;
    fire('pull_request_assign', 'assigned');
  }
  Object.assign(current, { assignees: now.assignees, assignee: now.assignee });
  if (now.milestone && now.milestone.id !== before.milestone?.id) {
    current.milestone = now.milestone;
    fire('pull_request_milestone', 'milestoned');
  }
  current.labels = now.labels;
  if (now.state !== before.state) {
    Object.assign(current, { state: now.state, closed_at: now.closed_at });
    fire('pull_request', now.state === 'closed' ? 'closed' : 'reopened');
  }
  if (now.base?.ref !== before.base?.ref) {
    current.base = now.base;
    fire('pull_request', 'edited', { ref: String(now.base?.ref) });
  }
  return events;
}
