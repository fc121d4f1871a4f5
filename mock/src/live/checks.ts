// The operations live mode runs, and what each needs.
import type { GiteaClient } from 'gitea-contract';
import type { Found, Missing, MissingKind } from './wire.js';

type Id = 'keyId' | 'teamId' | 'commentId' | 'issue' | 'pull' | 'milestoneId' | 'hookId' | 'releaseId';
/** What the operations work on: given as options, or looked up on the server. */
export type Target = Partial<Record<Id, number> & Record<'owner' | 'repo' | 'workflow' | 'collaborator', string>> & {
  package?: { owner: string; type: string; name: string };
};

interface Context {
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
  prepare(ctx: Context): Promise<Call | Skip>;
}

type Repo = { owner: string; repo: string };
type Settings = Record<string, unknown>;

const needRepo: Skip = { skip: 'give --repo owner/name', kind: 'input' };
const isSkip = (value: unknown): value is Skip => typeof value === 'object' && value !== null && 'skip' in value;

/** What was sought, why it was not found, and the option that gives it (not when the look-up got no answer). */
const notFound = (what: string, found: Missing, option: string): Skip => ({
  skip: `no ${what} to use: ${found.missing}${found.kind === 'input' ? `; give ${option}` : ''}`,
  kind: found.kind,
});

/** The integer `field` of the first record at `path`, or why there is none. */
async function idAt(ctx: Context, path: string, what: string, option: string, field: string): Promise<number | Skip> {
  const found = await ctx.lookUp(path);
  if ('missing' in found) return notFound(what, found, option);
  const id = found.record[field];
  if (Number.isInteger(id)) return id as number;
  const skip = `no ${what} to use: GET ${path} answered a record without an integer ${field}; give ${option}`;
  return { skip, kind: 'input' };
}

/** A record by its id: the option `given`, else the `field` of the first one at `list` (below the repository but `/user`). */
type ById = [operationId: string, writes: boolean, given: keyof Target, list: string, what: string, option: string];
function byId(
  [operationId, writes, given, list, what, option, field = 'id']: [...ById, field?: string],
  call: (repo: Repo, id: number) => Call,
): Check {
  return {
    operationId,
    writes,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const inRepo = !list.startsWith('/user');
      if (inRepo && !writes && (!owner || !repo)) return needRepo;
      const path = inRepo ? `/repos/${owner}/${repo}${list}` : list;
      const id = (ctx.target[given] as number | undefined) ?? (await idAt(ctx, path, what, option, field));
      return isSkip(id) ? id : call({ owner: owner!, repo: repo! }, id);
    },
  };
}

/** The settings of the record `given` below `list`, else of the first one. `{}` for a given id the server serves no
 * such route for (404 or 405, as the mock): on Gitea that read answers whenever the edit would. */
async function settingsOf(ctx: Context, given: number | undefined, list: string, what: string, option: string) {
  if (given === undefined) {
    const found = await ctx.lookUp(list);
    return 'missing' in found ? notFound(what, found, option) : found.record;
  }
  const found = await ctx.lookUp(`${list.split('?')[0]}/${given}`);
  if ('record' in found) return found.record;
  if (found.status === 404 || found.status === 405) return {};
  return { skip: `the ${what}'s settings could not be read, to send them back: ${found.missing}`, kind: found.kind };
}

/** A write that sends a record's own settings back (`body` of them), the record `given` or the first listed. */
function edit(
  [operationId, given, list, what, option]: [string, keyof Target, string, string, string],
  body: (settings: Settings, ctx: Context) => Record<string, unknown>,
  call: (repo: Repo, id: unknown, body: never) => Call,
): Check {
  return {
    operationId,
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target as Repo;
      const id = ctx.target[given] as number | undefined;
      const settings = await settingsOf(ctx, id, `/repos/${owner}/${repo}${list}`, what, option);
      if (isSkip(settings)) return settings;
      return call({ owner, repo }, id ?? settings.id, body(settings, ctx) as never);
    },
  };
}

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
  byId(
    ['repoGetKey', false, 'keyId', '/keys', 'deploy key', '--key-id'],
    (repo, id) => (client) => client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { ...repo, id } } }),
  ),
  byId(
    ['orgListTeamMembers', false, 'teamId', '/user/teams', 'team', '--team-id'],
    (_, id) => (client) => client.GET('/teams/{id}/members', { params: { path: { id }, query: { limit: 5 } } }),
  ),
  {
    operationId: 'ActionsGetWorkflow',
    writes: false,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      if (!owner || !repo) return needRepo;
      let workflow_id = ctx.target.workflow;
      if (!workflow_id) {
        const path = `/repos/${owner}/${repo}/actions/workflows`;
        const found = await ctx.lookUp(path);
        if ('missing' in found) return notFound('workflow', found, '--workflow file.yml');
        const listed = (found.record as { workflows?: { id?: unknown }[] }).workflows?.[0]?.id;
        if (typeof listed !== 'string')
          return { skip: `no workflow to use: GET ${path} listed none; give --workflow file.yml`, kind: 'input' };
        workflow_id = listed;
      }
      const path = { owner, repo, workflow_id };
      return (client) => client.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', { params: { path } });
    },
  },
  byId(
    ['issueListIssueCommentAttachments', false, 'commentId', '/issues/comments', 'comment', '--comment-id'],
    (repo, id) => (client) =>
      client.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', { params: { path: { ...repo, id } } }),
  ),
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
      const { owner, repo, collaborator } = ctx.target as Repo & Target;
      if (!collaborator)
        return { skip: 'give --collaborator user (added to the scratch repository with read access)', kind: 'input' };
      return (client) =>
        client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
          params: { path: { owner, repo, collaborator } },
          body: { permission: 'read' },
        });
    },
  },
  // Removing nobody changes nothing but is a full request.
  byId(
    ['issueRemoveAssignees', true, 'issue', '/issues?state=all&type=issues', 'issue', '--issue', 'number'],
    (repo, index) => (client) =>
      client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { ...repo, index } },
        body: { assignees: [] },
      }),
  ),
  byId(
    ['repoEditPullRequest', true, 'pull', '/pulls?state=all', 'pull request', '--pull', 'number'],
    (repo, index) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...repo, index } }, body: {} }),
  ),
  // Its own title again, and its deadline: the server clears the deadline when due_on is omitted.
  edit(
    ['issueEditMilestone', 'milestoneId', '/milestones?state=all', 'milestone', '--milestone-id'],
    (milestone) => ({
      ...(milestone.title ? { title: String(milestone.title) } : {}),
      ...(milestone.due_on ? { due_on: String(milestone.due_on) } : {}),
    }),
    (repo, id, body) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/milestones/{id}', { params: { path: { ...repo, id: String(id) } }, body }),
  ),
  // Its own settings again: the server resets the events, the branch filter and the authorization
  // header when they are omitted (it shows the header back in clear).
  edit(
    ['repoEditHook', 'hookId', '/hooks', 'webhook', '--hook-id'],
    (hook, ctx) => {
      if (typeof hook.authorization_header === 'string' && hook.authorization_header)
        ctx.keepSecret(hook.authorization_header);
      return {
        ...(typeof hook.active === 'boolean' ? { active: hook.active } : {}),
        ...(Array.isArray(hook.events) ? { events: hook.events } : {}),
        ...(typeof hook.branch_filter === 'string' ? { branch_filter: hook.branch_filter } : {}),
        ...(typeof hook.authorization_header === 'string' ? { authorization_header: hook.authorization_header } : {}),
      };
    },
    (repo, id, body) => (client) =>
      client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { ...repo, id: Number(id) } }, body }),
  ),
  byId(['repoCreateReleaseAttachment', true, 'releaseId', '/releases', 'release', '--release-id'], (repo, id) => {
    const form = new FormData();
    form.append('attachment', new Blob(['written by gitea-contract live mode\n']), 'gitea-contract-live-check.txt');
    return (client) =>
      client.POST('/repos/{owner}/{repo}/releases/{id}/assets', {
        params: { path: { ...repo, id } },
        body: form as never,
        bodySerializer: (body: unknown) => body as FormData,
      });
  }),
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
