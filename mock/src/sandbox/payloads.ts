// The payloads of Gitea's webhook deliveries from the sandbox's records, as Gitea's notifier builds
// them (services/webhook/notifier.go, modules/structs/hook.go): keys in the order of Go's structs,
// records as the API answers with them, the caller and owner as an anonymous visitor sees them,
// indented as Gitea's JSONPayload writes it.
import type { Payload } from '../webhooks/deliveries.js';
import type { Rec } from './world.js';

/** The event types the twenty operations cause, as `X-Gitea-Event-Type` names them. */
export const EVENT_TYPES = [
  'issue_assign',
  'pull_request',
  'pull_request_assign',
  'pull_request_milestone',
  'repository',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One event of a world: its payload, the repository whose hooks get it, and for the events hooks filter by branch (create, delete, push) its full git reference. */
export interface HookEvent extends Payload {
  repo: number;
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
export const written = (payload: Rec, type: string): string =>
  JSON.stringify(payload, null, type === 'repository' ? 1 : 2);

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
  return { type, action, repo: repository.id, json: written(payload, type) };
}

/** A delivery about an issue (`IssuePayload`). */
export function issueEvent(type: EventType, action: string, issue: Rec, { repository, sender }: Common): HookEvent {
  const payload = { action, number: issue.number, issue, repository, sender, commit_id: '' };
  return { type, action, repo: repository.id, json: written(payload, type) };
}

/** A delivery about a repository (`RepositoryPayload`): `organization` is its owner, user or organization. */
export function repositoryEvent(action: string, repository: Rec, owner: Rec, sender: Rec): HookEvent {
  const payload = { action, repository, organization: owner, sender };
  return { type: 'repository', action, repo: repository.id, json: written(payload, 'repository') };
}
