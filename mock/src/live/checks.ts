// The operations live mode runs, and what each needs. Read-only ones run by default; the ones
// that write run only with --allow-writes, and only inside the scratch repository.
import type { GiteaClient } from 'gitea-contract';
import type { MissingKind } from './results.js';
import type { Found, Missing } from './wire.js';

/** What the operations work on: given as options, or looked up on the server. */
export interface Target {
  owner?: string;
  repo?: string;
  keyId?: number;
  teamId?: number;
  commentId?: number;
  workflow?: string;
  package?: { owner: string; type: string; name: string };
  collaborator?: string;
  issue?: number;
  pull?: number;
  milestoneId?: number;
  hookId?: number;
  releaseId?: number;
}

export interface Context {
  target: Target;
  /** The first record a route of the server outside the contract answers, or why there is none. */
  lookUp(path: string): Promise<Found>;
  /** Keeps a value the server holds as a secret (a hook's authorization header) out of every line and file. */
  keepSecret(value: string): void;
}

type Call = (client: GiteaClient) => Promise<unknown>;
/** Why an operation cannot be run; `kind` says whether a look-up found nothing (`input`) or got no answer (`timeout`, `network`). */
interface Skip {
  skip: string;
  kind: MissingKind;
}

export interface Check {
  operationId: string;
  writes: boolean;
  /** The call to make, or why it cannot be made. */
  prepare(ctx: Context): Promise<Call | Skip>;
}

const needRepo: Skip = { skip: 'give --repo owner/name', kind: 'input' };

/**
 * The skip for a look-up that found nothing: what was sought, why it was not found, and the
 * option that gives it; not when the look-up got no answer (a time-out, a failed connection),
 * which the option would not have changed.
 */
function notFound(what: string, found: Missing, option: string): Skip {
  return {
    skip: `no ${what} to use: ${found.missing}${found.kind === 'input' ? `; give ${option}` : ''}`,
    kind: found.kind,
  };
}

/** The integer `field` of the first record at `path`, or the skip that says why there is none. */
async function idAt(ctx: Context, path: string, what: string, option: string, field = 'id'): Promise<number | Skip> {
  const found = await ctx.lookUp(path);
  if ('missing' in found) return notFound(what, found, option);
  const id = found.record[field];
  return Number.isInteger(id)
    ? (id as number)
    : {
        skip: `no ${what} to use: GET ${path} answered a record without an integer ${field}; give ${option}`,
        kind: 'input',
      };
}

/**
 * The current settings of the record at `path`, to send back unchanged; `{}` when the server
 * serves no such route (404 or 405, as the mock, which serves the 20 operations only): on Gitea
 * that read answers whenever the edit would, so the empty edit goes only where the record is not.
 */
async function settingsAt(ctx: Context, path: string, what: string): Promise<Record<string, unknown> | Skip> {
  const found = await ctx.lookUp(path);
  if ('record' in found) return found.record;
  if (found.status === 404 || found.status === 405) return {};
  return { skip: `the ${what}'s settings could not be read, to send them back: ${found.missing}`, kind: found.kind };
}

const isSkip = (value: unknown): value is Skip => typeof value === 'object' && value !== null && 'skip' in value;

export const checks: Check[] = [
  {
    operationId: 'adminGetAllOrgs',
    writes: false,
    prepare: async () => (client) => client.GET('/admin/orgs', { params: { query: { limit: 5 } } }),
  },
  {
    operationId: 'listPackageVersions',
    writes: false,
    async prepare(ctx) {
      let pkg = ctx.target.package;
      const owner = ctx.target.owner;
      if (!pkg) {
        if (!owner)
          return { skip: 'give --package owner/type/name (or --repo whose owner has packages)', kind: 'input' };
        const found = await ctx.lookUp(`/packages/${encodeURIComponent(owner)}`);
        if ('missing' in found) return notFound('package', found, '--package owner/type/name');
        pkg = { owner, type: String(found.record.type), name: String(found.record.name) };
      }
      const path = pkg as { owner: string; type: never; name: string };
      return (client) => client.GET('/packages/{owner}/{type}/{name}', { params: { path } });
    },
  },
  {
    operationId: 'repoGetKey',
    writes: false,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      if (!owner || !repo) return needRepo;
      const id = ctx.target.keyId ?? (await idAt(ctx, `/repos/${owner}/${repo}/keys`, 'deploy key', '--key-id'));
      if (isSkip(id)) return id;
      return (client) => client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner, repo, id } } });
    },
  },
  {
    operationId: 'orgListTeamMembers',
    writes: false,
    async prepare(ctx) {
      const id = ctx.target.teamId ?? (await idAt(ctx, '/user/teams', 'team', '--team-id'));
      if (isSkip(id)) return id;
      return (client) => client.GET('/teams/{id}/members', { params: { path: { id }, query: { limit: 5 } } });
    },
  },
  {
    operationId: 'ActionsGetWorkflow',
    writes: false,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      if (!owner || !repo) return needRepo;
      let workflow = ctx.target.workflow;
      if (!workflow) {
        const path = `/repos/${owner}/${repo}/actions/workflows`;
        const found = await ctx.lookUp(path);
        if ('missing' in found) return notFound('workflow', found, '--workflow file.yml');
        const listed = (found.record as { workflows?: { id?: unknown }[] }).workflows?.[0]?.id;
        if (typeof listed !== 'string')
          return { skip: `no workflow to use: GET ${path} listed none; give --workflow file.yml`, kind: 'input' };
        workflow = listed;
      }
      const workflow_id = workflow;
      return (client) =>
        client.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', {
          params: { path: { owner, repo, workflow_id } },
        });
    },
  },
  {
    operationId: 'issueListIssueCommentAttachments',
    writes: false,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      if (!owner || !repo) return needRepo;
      const id =
        ctx.target.commentId ?? (await idAt(ctx, `/repos/${owner}/${repo}/issues/comments`, 'comment', '--comment-id'));
      if (isSkip(id)) return id;
      return (client) =>
        client.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', { params: { path: { owner, repo, id } } });
    },
  },
  {
    // Renders and stores nothing, so it runs by default too.
    operationId: 'renderMarkdown',
    writes: false,
    prepare: async () => (client) =>
      client.POST('/markdown', {
        body: { Text: '# Contract check\n\nIssue #1, **bold**.', Mode: 'markdown' },
        parseAs: 'text',
      }),
  },
  {
    operationId: 'repoAddCollaborator',
    writes: true,
    async prepare(ctx) {
      const { owner, repo, collaborator } = ctx.target;
      if (!collaborator)
        return { skip: 'give --collaborator user (added to the scratch repository with read access)', kind: 'input' };
      return (client) =>
        client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
          params: { path: { owner: owner!, repo: repo!, collaborator } },
          body: { permission: 'read' },
        });
    },
  },
  {
    operationId: 'issueRemoveAssignees',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const index =
        ctx.target.issue ??
        (await idAt(ctx, `/repos/${owner}/${repo}/issues?state=all&type=issues`, 'issue', '--issue', 'number'));
      if (isSkip(index)) return index;
      // Removing nobody changes nothing but is a full request.
      return (client) =>
        client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
          params: { path: { owner: owner!, repo: repo!, index } },
          body: { assignees: [] },
        });
    },
  },
  {
    operationId: 'repoEditPullRequest',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const index =
        ctx.target.pull ??
        (await idAt(ctx, `/repos/${owner}/${repo}/pulls?state=all`, 'pull request', '--pull', 'number'));
      if (isSkip(index)) return index;
      return (client) =>
        client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { owner: owner!, repo: repo!, index } },
          body: {},
        });
    },
  },
  {
    operationId: 'issueEditMilestone',
    writes: true,
    async prepare(ctx) {
      const { owner, repo, milestoneId } = ctx.target;
      let milestone: Record<string, unknown> | Skip;
      if (milestoneId === undefined) {
        const found = await ctx.lookUp(`/repos/${owner}/${repo}/milestones?state=all`);
        milestone = 'missing' in found ? notFound('milestone', found, '--milestone-id') : found.record;
      } else {
        milestone = await settingsAt(ctx, `/repos/${owner}/${repo}/milestones/${milestoneId}`, 'milestone');
      }
      if (isSkip(milestone)) return milestone;
      // Its own title again, and its deadline: the server clears the deadline when due_on is omitted.
      const body = {
        ...(milestone.title ? { title: String(milestone.title) } : {}),
        ...(milestone.due_on ? { due_on: String(milestone.due_on) } : {}),
      };
      const id = String(milestoneId ?? milestone.id);
      return (client) =>
        client.PATCH('/repos/{owner}/{repo}/milestones/{id}', {
          params: { path: { owner: owner!, repo: repo!, id } },
          body,
        });
    },
  },
  {
    operationId: 'repoEditHook',
    writes: true,
    async prepare(ctx) {
      const { owner, repo, hookId } = ctx.target;
      let hook: Record<string, unknown> | Skip;
      if (hookId === undefined) {
        const found = await ctx.lookUp(`/repos/${owner}/${repo}/hooks`);
        hook = 'missing' in found ? notFound('webhook', found, '--hook-id') : found.record;
      } else {
        hook = await settingsAt(ctx, `/repos/${owner}/${repo}/hooks/${hookId}`, 'webhook');
      }
      if (isSkip(hook)) return hook;
      // Its own settings again: the server resets the events, the branch filter and the
      // authorization header when they are omitted (it shows the header back in clear).
      const body = {
        ...(typeof hook.active === 'boolean' ? { active: hook.active } : {}),
        ...(Array.isArray(hook.events) ? { events: hook.events as never } : {}),
        ...(typeof hook.branch_filter === 'string' ? { branch_filter: hook.branch_filter } : {}),
        ...(typeof hook.authorization_header === 'string' ? { authorization_header: hook.authorization_header } : {}),
      };
      if (body.authorization_header) ctx.keepSecret(body.authorization_header);
      const id = hookId ?? Number(hook.id);
      return (client) =>
        client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { owner: owner!, repo: repo!, id } },
          body,
        });
    },
  },
  {
    operationId: 'repoCreateReleaseAttachment',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const id =
        ctx.target.releaseId ?? (await idAt(ctx, `/repos/${owner}/${repo}/releases`, 'release', '--release-id'));
      if (isSkip(id)) return id;
      const form = new FormData();
      form.append('attachment', new Blob(['written by gitea-contract live mode\n']), 'gitea-contract-live-check.txt');
      return (client) =>
        client.POST('/repos/{owner}/{repo}/releases/{id}/assets', {
          params: { path: { owner: owner!, repo: repo!, id } },
          body: form as never,
          bodySerializer: (body: unknown) => body as FormData,
        });
    },
  },
];

/** Operations live mode never runs: they change data outside the scratch repository. */
export const neverRun = [
  'userCreateOAuth2Application',
  'repoMigrate',
  'userCurrentPostGPGKey',
  'notifyReadThread',
  'orgEditLabel',
  'updateUserSecret',
  'adminRenameUser',
];
