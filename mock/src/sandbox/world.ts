// The sandbox's world: the records of a Gitea server as plain JSON, seeded from the document's own
// examples (the organization acme, its repository acme/rocket, the users alice, bob and carol, their
// hook, labels, milestones, issue, pull request, team, packages, keys…). Records are kept in the
// shape the API answers with, so reading one is returning it; the answer is then validated
// against the document by the front.
import type { IHttpOperation } from '@stoplight/types';

/** A record as the API sends it. Loosely typed on purpose: every answer built from one is validated against the document. */
export type Rec = Record<string, any>;

/** 2: worlds remember renamed users (`redirects`) and hooks keep their authorization header in the record. */
export const WORLD_FORMAT = 2;

export interface World {
  format: typeof WORLD_FORMAT;
  /** The next fresh id; seed ids stay below it, so an id names one record of any kind. */
  nextId: number;
  /** Records created since the seed, for the size cap. */
  created: number;
  users: Rec[];
  /** Organizations as repository owners see them (User-shaped), by organization id. */
  owners: Rec[];
  orgs: Rec[];
  repos: Rec[];
  hooks: { repo: number; hook: Rec }[];
  issues: { repo: number; issue: Rec }[];
  pulls: { repo: number; pull: Rec }[];
  orgLabels: { org: number; label: Rec }[];
  repoLabels: { repo: number; label: Rec }[];
  milestones: { repo: number; milestone: Rec }[];
  gpgKeys: { user: number; armored: string; key: Rec }[];
  packages: Rec[];
  threads: Rec[];
  deployKeys: { repo: number; key: Rec }[];
  teams: { team: Rec; members: number[] }[];
  workflows: { repo: number; workflow: Rec }[];
  /** Secret names per user; the values are never kept. */
  secrets: { user: number; name: string }[];
  releases: { repo: number; id: number; attachments: Rec[] }[];
  comments: { repo: number; id: number; attachments: Rec[] }[];
  collaborators: { repo: number; user: number; permission: string }[];
  apps: { user: number; app: Rec }[];
  /** Old names of renamed users, lower-cased, and whom they now lead to (Gitea's user redirects). */
  redirects: { name: string; user: number }[];
}

/** Templates for records the sandbox creates, taken from the document's examples too. */
export interface Templates {
  repository: Rec;
  application: Rec;
  gpgKey: Rec;
  /** The armored key of userCurrentPostGPGKey's request example, answered with its documented key. */
  sampleArmoredKey: string;
}

function findOperation(operations: readonly IHttpOperation[], operationId: string): IHttpOperation {
  const op = operations.find((candidate) => (candidate.iid ?? candidate.id) === operationId);
  if (!op)
    throw new Error(
      `the sandbox seeds its world from the package's openapi.yaml, which has ${operationId}; this document does not`,
    );
  return op;
}

/** The first example of an operation's response (or request body), as the document gives it. */
function example(operations: readonly IHttpOperation[], operationId: string, status: string | 'request'): Rec {
  const op = findOperation(operations, operationId);
  const contents =
    status === 'request'
      ? op.request?.body?.contents
      : op.responses.find((response) => response.code === status)?.contents;
  const value = (contents?.[0]?.examples?.[0] as { value?: unknown } | undefined)?.value;
  if (value === undefined)
    throw new Error(`the sandbox seeds its world from ${operationId} ${status}'s example, which this document lacks`);
  return structuredClone(value) as Rec;
}

function pathExample(operations: readonly IHttpOperation[], operationId: string, name: string): unknown {
  const param = findOperation(operations, operationId).request?.path?.find((candidate) => candidate.name === name);
  return (param?.examples?.[0] as { value?: unknown } | undefined)?.value;
}

function byId<T extends Rec>(records: T[]): T[] {
  const seen = new Map<number, T>();
  for (const record of records) if (!seen.has(record.id)) seen.set(record.id, record);
  return [...seen.values()];
}

/** The seed world and the creation templates, from the examples of `operations`. */
export function seedWorld(operations: readonly IHttpOperation[]): { seed: World; templates: Templates } {
  const get = (operationId: string, status: string | 'request'): Rec => example(operations, operationId, status);
  const key = get('repoGetKey', '200');
  const issue = get('issueRemoveAssignees', '200');
  const pull = get('repoEditPullRequest', '201');
  // The repository as its owner's members see it, with the caller's permissions.
  const rocket = structuredClone(pull.base.repo) as Rec;
  const team = structuredClone(pull.requested_reviewers_teams[0]) as Rec;
  const members = get('orgListTeamMembers', '200') as unknown as Rec[];
  const thread = get('notifyReadThread', '205');
  const closed = get('issueEditMilestone', '200');
  const users = byId([...members, issue.user, issue.assignee, pull.user, pull.assignee, ...pull.requested_reviewers]);
  const bob = users.find((user) => user.login === 'bob');

  // Before the documented requests: bob is still assigned to issue 42, milestone v1.1.0 still open,
  // the thread still unread and the pull request at the version repoEditPullRequest's example sends, so each
  // operation's request example, sent to a fresh world, answers its documented example.
  if (bob) {
    issue.assignees = [bob, ...issue.assignees];
    issue.assignee = bob;
  }
  Object.assign(closed, { state: 'open', closed_at: null });
  thread.unread = true;
  const request = get('repoEditPullRequest', 'request');
  if (typeof request.content_version === 'number') pull.content_version = request.content_version;

  const seed: World = {
    format: WORLD_FORMAT,
    nextId: 100_000,
    created: 0,
    users,
    owners: [rocket.owner],
    orgs: get('adminGetAllOrgs', '200') as unknown as Rec[],
    repos: [rocket],
    hooks: [{ repo: rocket.id, hook: get('repoEditHook', '200') }],
    issues: [{ repo: rocket.id, issue }],
    pulls: [{ repo: rocket.id, pull }],
    orgLabels: [{ org: team.organization.id, label: get('orgEditLabel', '200') }],
    repoLabels: byId([...issue.labels, ...pull.labels]).map((label) => ({ repo: rocket.id, label })),
    milestones: byId([closed, issue.milestone, pull.milestone].filter(Boolean)).map((milestone) => ({
      repo: rocket.id,
      milestone,
    })),
    gpgKeys: [],
    packages: get('listPackageVersions', '200') as unknown as Rec[],
    threads: [thread],
    deployKeys: [{ repo: rocket.id, key }],
    teams: [{ team, members: members.map((member) => member.id) }],
    workflows: [{ repo: rocket.id, workflow: get('ActionsGetWorkflow', '200') }],
    secrets: [],
    releases: [
      {
        repo: rocket.id,
        id: Number(pathExample(operations, 'repoCreateReleaseAttachment', 'id') ?? 14001),
        attachments: [],
      },
    ],
    comments: [
      {
        repo: rocket.id,
        id: Number(pathExample(operations, 'issueListIssueCommentAttachments', 'id') ?? 15001),
        attachments: get('issueListIssueCommentAttachments', '200') as unknown as Rec[],
      },
    ],
    collaborators: [],
    apps: [],
    redirects: [],
  };
  const templates: Templates = {
    repository: get('repoMigrate', '201'),
    application: get('userCreateOAuth2Application', '201'),
    gpgKey: get('userCurrentPostGPGKey', '201'),
    sampleArmoredKey: String(get('userCurrentPostGPGKey', 'request').armored_public_key ?? ''),
  };
  return { seed, templates };
}

/**
 * Replaces, everywhere in the world, the copies of the record `updated` (same id, same kind) with
 * its new fields: a renamed user shows under its new login in every issue, team and package, an
 * edited label or milestone in every issue and pull request that carries it.
 */
export function propagate(world: World, updated: Rec, isSameKind: (candidate: Rec) => boolean): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Rec;
    if (record !== updated && record.id === updated.id && isSameKind(record)) {
      for (const name of Object.keys(record)) if (name in updated) record[name] = structuredClone(updated[name]);
      return;
    }
    for (const value of Object.values(record)) visit(value);
  };
  visit(world);
}

export const isUser = (record: Rec): boolean => typeof record.login === 'string';
export const isLabel = (record: Rec): boolean => 'color' in record && 'exclusive' in record;
export const isMilestone = (record: Rec): boolean => 'open_issues' in record && 'closed_issues' in record;
