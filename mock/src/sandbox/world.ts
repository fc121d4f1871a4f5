// The sandbox's world: a Gitea server's records as plain JSON, in the shape the API answers with, seeded from the
// document's examples (acme, acme/rocket, alice, bob, carol, their hook, labels, milestones, issue, pull request…).
import type { IHttpOperation } from '@stoplight/types';
import type { components } from 'gitea-contract';
import { deref, type JsonObject } from '../contract/document.js';

type Schemas = components['schemas'];
/** A record of a schema with the fields the sandbox finds it by (world-check.ts requires them). */
type With<T, K extends keyof T> = T & Required<Pick<T, K>>;
export type User = With<Schemas['User'], 'id' | 'login'>;
export type Organization = With<Schemas['Organization'], 'id' | 'name'>;
export type Repository = With<Schemas['Repository'], 'id' | 'name' | 'full_name'> & { owner: User };
export type Hook = With<Schemas['Hook'], 'id'>;
export type Issue = With<Schemas['Issue'], 'id' | 'number'>;
export type PullRequest = With<Schemas['PullRequest'], 'id' | 'number' | 'url' | 'html_url'>;
type Label = With<Schemas['Label'], 'id' | 'color' | 'exclusive'>;
type Milestone = With<Schemas['Milestone'], 'id' | 'title' | 'open_issues' | 'closed_issues'>;
export type GPGKey = With<Schemas['GPGKey'], 'id'>;
type Thread = With<Schemas['NotificationThread'], 'id'>;
type DeployKey = With<Schemas['DeployKey'], 'id'>;
type Team = With<Schemas['Team'], 'id'>;
export type Attachment = With<Schemas['Attachment'], 'id'>;
export type Application = With<Schemas['OAuth2Application'], 'id'>;

export interface World {
  /** 3: worlds know their repositories' branches (`branches`). */
  format: 3;
  /** The next fresh id; seed ids stay below it, so an id names one record of any kind. */
  nextId: number;
  /** Records created since the seed, for the size cap. */
  created: number;
  users: User[];
  /** Organizations as repository owners see them (User-shaped), by organization id. */
  owners: User[];
  orgs: Organization[];
  repos: Repository[];
  hooks: { repo: number; hook: Hook }[];
  issues: { repo: number; issue: Issue }[];
  pulls: { repo: number; pull: PullRequest }[];
  orgLabels: { org: number; label: Label }[];
  repoLabels: { repo: number; label: Label }[];
  milestones: { repo: number; milestone: Milestone }[];
  gpgKeys: { user: number; armored: string; key: GPGKey }[];
  packages: (With<Schemas['Package'], 'id' | 'name' | 'type'> & { owner: User })[];
  threads: Thread[];
  deployKeys: { repo: number; key: DeployKey }[];
  teams: { team: Team; members: number[] }[];
  workflows: { repo: number; workflow: With<Schemas['ActionWorkflow'], 'id'> }[];
  /** Secret names per user; the values are never kept. */
  secrets: { user: number; name: string }[];
  releases: { repo: number; id: number; attachments: Attachment[] }[];
  comments: { repo: number; id: number; attachments: Attachment[] }[];
  collaborators: { repo: number; user: number; permission: string }[];
  apps: { user: number; app: Application }[];
  /** Old names of renamed users, lower-cased, and whom they now lead to (Gitea's user redirects). */
  redirects: { name: string; user: number }[];
  /** The branches of each repository, by name: what a pull request's new base is looked up in. */
  branches: { repo: number; name: string }[];
}

type SeedPull = PullRequest & { base: { repo: Repository }; requested_reviewers: User[] };
export type Templates = ReturnType<typeof seedWorld>['templates'];

export const WORLD_FORMAT: World['format'] = 3;
/** A branch of the seed's repository besides its default and the pull request's head, so that a pull request can be retargeted. */
const SEED_BRANCH = 'develop';

/** The first example of the delivery of webhook `type`, resolved. */
function exampleDelivery(document: JsonObject, type: string): unknown {
  const hook = deref(document, (document.webhooks as JsonObject | undefined)?.[type], '').value as
    | JsonObject
    | undefined;
  const body = deref(document, (hook?.post as JsonObject | undefined)?.requestBody, '').value as JsonObject | undefined;
  const media = Object.values((body?.content as JsonObject | undefined) ?? {})[0] as JsonObject | undefined;
  const example = Object.values((media?.examples as JsonObject | undefined) ?? {})[0];
  const value = (deref(document, example, '').value as JsonObject | undefined)?.value;
  if (value === undefined)
    throw new Error(`the sandbox seeds its world from the ${type} delivery's example, which this document lacks`);
  return structuredClone(value);
}

const first = (examples: unknown[] | undefined) => (examples?.[0] as { value?: unknown } | undefined)?.value;

const byId = <T extends { id: number }>(records: T[]): T[] =>
  records.filter((record, index) => records.findIndex((other) => other.id === record.id) === index);

/** `document`: for what a server profile without E4, E7 or E13 (profiles/*.yaml) keeps elsewhere or lacks. */
export function seedWorld(operations: readonly IHttpOperation[], document: JsonObject) {
  const has = (operationId: string): boolean => operations.some((op) => (op.iid ?? op.id) === operationId);
  const find = (operationId: string): IHttpOperation => {
    const op = operations.find((candidate) => (candidate.iid ?? candidate.id) === operationId);
    if (op) return op;
    throw new Error(
      `the sandbox seeds its world from the package's openapi.yaml, which has ${operationId}; this document does not`,
    );
  };
  /** The first example of an operation's response (or request body): the front checks every answer against them. */
  const get = <T>(operationId: string, status: string | 'request'): T => {
    const op = find(operationId);
    const contents =
      status === 'request' ? op.request?.body?.contents : op.responses.find((r) => r.code === status)?.contents;
    const value = first(contents?.[0]?.examples);
    if (value === undefined)
      throw new Error(`the sandbox seeds its world from ${operationId} ${status}'s example, which this document lacks`);
    return structuredClone(value) as T;
  };
  const pathId = (operationId: string, fallback: number) =>
    Number(first(find(operationId).request?.path?.find((candidate) => candidate.name === 'id')?.examples) ?? fallback);
  const key = get<DeployKey>('repoGetKey', '200');
  // E4's answer is issue_assign's example delivery's issue, which every profile keeps.
  const issue = has('issueRemoveAssignees')
    ? get<Issue>('issueRemoveAssignees', '200')
    : (exampleDelivery(document, 'issue_assign') as { issue: Issue }).issue;
  const pull = get<SeedPull>('repoEditPullRequest', '201');
  // The repository as its owner's members see it, with the caller's permissions.
  const rocket = structuredClone(pull.base.repo);
  const repo = rocket.id;
  const team = structuredClone(pull.requested_reviewers_teams![0]!) as Team & { organization: Organization };
  const members = get<User[]>('orgListTeamMembers', '200');
  const thread = get<Thread>('notifyReadThread', '205');
  const closed = get<Milestone>('issueEditMilestone', '200');
  const listAttachments = 'issueListIssueCommentAttachments';
  const people = [issue.user, issue.assignee, pull.user, pull.assignee, ...pull.requested_reviewers];
  const users = byId([...members, ...people] as User[]);
  const bob = users.find((user) => user.login === 'bob');

  // Before the documented requests (bob still assigned to issue 42, milestone v1.1.0 open, the thread unread, the
  // pull request at the version repoEditPullRequest's example sends): each request example answers its example.
  if (bob) Object.assign(issue, { assignees: [bob, ...(issue.assignees ?? [])], assignee: bob });
  Object.assign(closed, { state: 'open', closed_at: null });
  thread.unread = true;
  const milestones = byId([closed, issue.milestone, pull.milestone].filter(Boolean) as Milestone[]);
  const request = get<{ content_version?: number }>('repoEditPullRequest', 'request');
  if (typeof request.content_version === 'number') pull.content_version = request.content_version;

  const seed: World = {
    format: WORLD_FORMAT,
    nextId: 100_000,
    created: 0,
    users,
    owners: [rocket.owner],
    orgs: get('adminGetAllOrgs', '200'),
    repos: [rocket],
    hooks: [{ repo, hook: get('repoEditHook', '200') }],
    issues: [{ repo, issue }],
    pulls: [{ repo, pull }],
    orgLabels: [{ org: team.organization.id, label: get('orgEditLabel', '200') }],
    repoLabels: byId([...(issue.labels ?? []), ...(pull.labels ?? [])] as Label[]).map((label) => ({ repo, label })),
    milestones: milestones.map((milestone) => ({ repo, milestone })),
    gpgKeys: [],
    packages: has('listPackageVersions') ? get('listPackageVersions', '200') : [],
    threads: [thread],
    deployKeys: [{ repo, key }],
    teams: [{ team, members: members.map((member) => member.id) }],
    workflows: has('ActionsGetWorkflow') ? [{ repo, workflow: get('ActionsGetWorkflow', '200') }] : [],
    secrets: [],
    releases: [{ repo, id: pathId('repoCreateReleaseAttachment', 14001), attachments: [] }],
    comments: [{ repo, id: pathId(listAttachments, 15001), attachments: get(listAttachments, '200') }],
    collaborators: [],
    apps: [],
    redirects: [],
    branches: [
      ...new Set([rocket.default_branch || 'main', String(pull.base.ref), SEED_BRANCH, String(pull.head?.ref)]),
    ].map((name) => ({ repo, name })),
  };
  const templates = {
    repository: get<Repository>('repoMigrate', '201'),
    application: get<Application>('userCreateOAuth2Application', '201'),
    gpgKey: get<GPGKey>('userCurrentPostGPGKey', '201'),
    /** The armored key of userCurrentPostGPGKey's request example, answered with its documented key. */
    sampleArmoredKey: String(
      get<{ armored_public_key?: string }>('userCurrentPostGPGKey', 'request').armored_public_key ?? '',
    ),
  };
  return { seed, templates };
}

/** Gives every copy of the record `updated` in the world (same id: an id names one record) its new fields: a renamed user, an edited label or milestone, everywhere. */
export function propagate(world: World, updated: { id: number }): void {
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (record === updated || record.id !== updated.id) for (const value of Object.values(record)) visit(value);
    else
      for (const name of Object.keys(record))
        if (name in updated) record[name] = structuredClone((updated as Record<string, unknown>)[name]);
  };
  visit(world);
}
