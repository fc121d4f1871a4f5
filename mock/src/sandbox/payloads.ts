// The bodies of Gitea's webhook deliveries, built from the sandbox's records as Gitea's notifier
// builds them from its own (services/webhook/notifier.go, modules/structs/hook.go): the keys in
// the order of Go's structs, the records as the API answers with them, the caller and a
// repository's owner as an anonymous visitor sees the account, and the JSON indented as
// Gitea's JSONPayload writes it.
import type { Rec } from './world.js';

/** The event types the twenty operations cause, as `X-Gitea-Event-Type` names them. */
export type EventType =
  | 'issue_assign'
  | 'pull_request'
  | 'pull_request_assign'
  | 'pull_request_milestone'
  | 'repository';

export const EVENT_TYPES: readonly EventType[] = [
  'issue_assign',
  'pull_request',
  'pull_request_assign',
  'pull_request_milestone',
  'repository',
];

const GROUPS: Record<string, string> = {
  issue_assign: 'issues',
  issue_label: 'issues',
  issue_milestone: 'issues',
  pull_request_assign: 'pull_request',
  pull_request_label: 'pull_request',
  pull_request_milestone: 'pull_request',
  pull_request_sync: 'pull_request',
  pull_request_review_request: 'pull_request',
  pull_request_comment: 'issue_comment',
  pull_request_review_approved: 'pull_request_approved',
  pull_request_review_rejected: 'pull_request_rejected',
  pull_request_review_comment: 'pull_request_comment',
};

/** `X-Gitea-Event`: the event as Gitea groups the types (modules/webhook/type.go, `Event`). */
export function eventOf(type: string): string {
  return GROUPS[type] ?? type;
}

/** One delivery's worth of event: what happened and to which repository, with its payload. */
export interface HookEvent {
  /** Its event type: one of EVENT_TYPES for the operations' deliveries, any of the 26 when fired on demand. */
  type: string;
  action: string;
  /** The repository whose hooks get it. */
  repo: number;
  /** The payload's JSON as Gitea writes it. */
  json: string;
  /** The git reference it is about, in full (`refs/heads/main`), for the events hooks filter by branch (create, delete, push). */
  ref?: string;
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * `user` as Gitea shows an account to nobody in particular (`convert.ToUser` without a doer): a
 * placeholder e-mail address on the no-reply domain of `host`, and none of what only the user
 * and site administrators see.
 */
export function anonymousUser(user: Rec, host: string): Rec {
  return {
    ...user,
    email: `${user.id}+${String(user.login).toLowerCase()}@noreply.${host}`,
    login_name: '',
    source_id: 0,
    language: '',
    is_admin: false,
    last_login: ZERO_TIME,
    active: false,
    prohibit_login: false,
  };
}

/** The JSON of a payload: indented by two spaces, and by one for repository events, as Gitea writes them. */
function written(payload: Rec, indent: 1 | 2): string {
  return JSON.stringify(payload, null, indent);
}

/** What changed in an `edited` delivery: the old value of one field. */
export type Changes = { title: string } | { body: string } | { ref: string };

function changesPayload(changes: Changes): Rec {
  const [[name, from]] = Object.entries(changes) as [[string, string]];
  return { [name]: { from }, added_labels: null, removed_labels: null };
}

interface Common {
  repository: Rec;
  sender: Rec;
}

/** A delivery about a pull request (`PullRequestPayload`). */
export function pullRequestEvent(
  type: EventType,
  action: string,
  pull: Rec,
  { repository, sender }: Common,
  changes?: Changes,
): HookEvent {
  const payload = {
    action,
    number: pull.number,
    ...(changes ? { changes: changesPayload(changes) } : {}),
    pull_request: pull,
    requested_reviewer: null,
    repository,
    sender,
    commit_id: '',
    review: null,
  };
  return { type, action, repo: repository.id, json: written(payload, 2) };
}

/** A delivery about an issue (`IssuePayload`). */
export function issueEvent(type: EventType, action: string, issue: Rec, { repository, sender }: Common): HookEvent {
  const payload = { action, number: issue.number, issue, repository, sender, commit_id: '' };
  return { type, action, repo: repository.id, json: written(payload, 2) };
}

/** A delivery about a repository (`RepositoryPayload`): `organization` is its owner, user or organization. */
export function repositoryEvent(action: string, repository: Rec, owner: Rec, sender: Rec): HookEvent {
  const payload = { action, repository, organization: owner, sender };
  return { type: 'repository', action, repo: repository.id, json: written(payload, 1) };
}
