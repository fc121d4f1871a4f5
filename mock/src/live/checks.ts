// The operations live mode runs, and what each needs. Read-only ones run by default; the ones
// that write run only with --allow-writes, and only inside the scratch repository.
import type { GiteaClient } from 'gitea-contract';

export interface Target {
  owner?: string;
  repo?: string;
  keyId?: number;
  teamId?: number;
  commentId?: number;
  workflow?: string;
  package?: { owner: string; type: string; name: string };
  collaborator?: string;
}

export interface Context {
  target: Target;
  /** The first item of a (non-contract) list endpoint of the server, to find ids to use. */
  first(path: string): Promise<Record<string, unknown> | undefined>;
}

export interface Check {
  operationId: string;
  writes: boolean;
  /** The call to make, or why it cannot be made. */
  prepare(ctx: Context): Promise<((client: GiteaClient) => Promise<unknown>) | string>;
}

const needRepo = 'give --repo owner/name';
const idOf = async (ctx: Context, path: string, field = 'id'): Promise<unknown> => (await ctx.first(path))?.[field];

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
      const owner = pkg?.owner ?? ctx.target.owner;
      if (!pkg && owner) {
        const found = await ctx.first(`/packages/${encodeURIComponent(owner)}`);
        if (found) pkg = { owner, type: String(found.type), name: String(found.name) };
      }
      if (!pkg) return 'give --package owner/type/name (or --repo whose owner has packages)';
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
      const id = ctx.target.keyId ?? Number(await idOf(ctx, `/repos/${owner}/${repo}/keys`));
      if (!Number.isInteger(id)) return 'the repository has no deploy key: give --key-id';
      return (client) => client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner, repo, id } } });
    },
  },
  {
    operationId: 'orgListTeamMembers',
    writes: false,
    async prepare(ctx) {
      const id = ctx.target.teamId ?? Number(await idOf(ctx, '/user/teams'));
      if (!Number.isInteger(id)) return 'the user is in no team: give --team-id';
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
        const list = (await ctx.first(`/repos/${owner}/${repo}/actions/workflows`)) as { workflows?: { id: string }[] } | undefined;
        workflow = list?.workflows?.[0]?.id;
      }
      if (!workflow) return 'the repository has no workflow: give --workflow file.yml';
      const workflow_id = workflow;
      return (client) => client.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', { params: { path: { owner, repo, workflow_id } } });
    },
  },
  {
    operationId: 'issueListIssueCommentAttachments',
    writes: false,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      if (!owner || !repo) return needRepo;
      const id = ctx.target.commentId ?? Number(await idOf(ctx, `/repos/${owner}/${repo}/issues/comments`));
      if (!Number.isInteger(id)) return 'the repository has no comment: give --comment-id';
      return (client) => client.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', { params: { path: { owner, repo, id } } });
    },
  },
  {
    // Renders and stores nothing, so it runs by default too.
    operationId: 'renderMarkdown',
    writes: false,
    prepare: async () => (client) => client.POST('/markdown', { body: { Text: '# Contract check\n\nIssue #1, **bold**.', Mode: 'markdown' }, parseAs: 'text' }),
  },
  {
    operationId: 'repoAddCollaborator',
    writes: true,
    async prepare(ctx) {
      const { owner, repo, collaborator } = ctx.target;
      if (!collaborator) return 'give --collaborator user (added to the scratch repository with read access)';
      return (client) => client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', { params: { path: { owner: owner!, repo: repo!, collaborator } }, body: { permission: 'read' } });
    },
  },
  {
    operationId: 'issueRemoveAssignees',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const index = Number(await idOf(ctx, `/repos/${owner}/${repo}/issues?state=all`, 'number'));
      if (!Number.isInteger(index)) return 'the scratch repository has no issue';
      // Removing nobody changes nothing but is a full request.
      return (client) => client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', { params: { path: { owner: owner!, repo: repo!, index } }, body: { assignees: [] } });
    },
  },
  {
    operationId: 'repoEditPullRequest',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const index = Number(await idOf(ctx, `/repos/${owner}/${repo}/pulls?state=all`, 'number'));
      if (!Number.isInteger(index)) return 'the scratch repository has no pull request';
      return (client) => client.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { owner: owner!, repo: repo!, index } }, body: {} });
    },
  },
  {
    operationId: 'issueEditMilestone',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const milestone = await ctx.first(`/repos/${owner}/${repo}/milestones?state=all`);
      if (!milestone) return 'the scratch repository has no milestone';
      const body = { title: String(milestone.title), ...(milestone.due_on ? { due_on: String(milestone.due_on) } : {}) };
      return (client) => client.PATCH('/repos/{owner}/{repo}/milestones/{id}', { params: { path: { owner: owner!, repo: repo!, id: String(milestone.id) } }, body });
    },
  },
  {
    operationId: 'repoEditHook',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const hook = await ctx.first(`/repos/${owner}/${repo}/hooks`);
      if (!hook) return 'the scratch repository has no webhook';
      const body = { active: Boolean(hook.active), events: hook.events as never, branch_filter: String(hook.branch_filter ?? '') };
      return (client) => client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { owner: owner!, repo: repo!, id: Number(hook.id) } }, body });
    },
  },
  {
    operationId: 'repoCreateReleaseAttachment',
    writes: true,
    async prepare(ctx) {
      const { owner, repo } = ctx.target;
      const id = Number(await idOf(ctx, `/repos/${owner}/${repo}/releases`));
      if (!Number.isInteger(id)) return 'the scratch repository has no release';
      const form = new FormData();
      form.append('attachment', new Blob(['written by gitea-contract live mode\n']), 'gitea-contract-live-check.txt');
      return (client) =>
        client.POST('/repos/{owner}/{repo}/releases/{id}/assets', { params: { path: { owner: owner!, repo: repo!, id } }, body: form as never, bodySerializer: (body: unknown) => body as FormData });
    },
  },
];

/** Operations live mode never runs: they change data outside the scratch repository. */
export const neverRun = ['userCreateOAuth2Application', 'repoMigrate', 'userCurrentPostGPGKey', 'notifyReadThread', 'orgEditLabel', 'updateUserSecret', 'adminRenameUser'];
