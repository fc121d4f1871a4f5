// The sandbox (`gitea-mock sandbox`), in-process: per operation, a write and then a read that
// shows it was kept, through the client; worlds per credential, the reset, and Prefer. Every
// answer is validated against the document by the mock (a violation is a 500 there) and the run
// ends with no warning.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  collectAll,
  createGiteaClient,
  markNotificationThread,
  renderMarkdown,
  unwrap,
  uploadReleaseAttachment,
  type EditMilestoneOption,
  type GiteaClient,
} from '../src/index.js';
import { startMockServer } from '../mock/src/server.js';
import { MOCK_VERSION, parseGoInt, sniffedType } from '../test/support/mock-internals.js';
import { apiErrorOf } from '../test/support/api-error.js';
import { call } from './support/call.js';
import { useSandbox } from './support/sandbox.js';

const sandbox = useSandbox({ maxWorlds: 50 });

/** A client with a credential of its own, so a world of its own. */
function fresh(): { gitea: GiteaClient; token: string } {
  const token = `sandbox-${randomUUID()}`;
  return { gitea: createGiteaClient({ baseUrl: sandbox.current.baseUrl, auth: { token }, retry: 0 }), token };
}

const rocket = { owner: 'acme', repo: 'rocket' } as const;

describe('each operation changes and reads the world', () => {
  it('repoEditHook merges config, replaces events, clears what Gitea clears, bumps updated_at; an unknown id is 404', async () => {
    const { gitea } = fresh();
    const path = { params: { path: { ...rocket, id: 4001 } } } as const;
    const first = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        ...path,
        body: {
          config: { url: 'https://ci.example.net/v2' },
          events: ['push', 'create'],
          branch_filter: 'release/*',
          name: ' nightly ',
        },
      }),
    );
    expect(first.config).toEqual({ url: 'https://ci.example.net/v2', content_type: 'json' });
    expect(first.events).toEqual(['push', 'create']);
    expect(first.name).toBe('nightly');
    expect(first.updated_at! > '2026-05-04T10:00:00Z').toBe(true);
    // The second edit sends only `active`: the stored config and name stay, and as on Gitea the
    // omitted events reset to push and the omitted branch filter is cleared.
    const second = await unwrap(gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', { ...path, body: { active: false } }));
    expect(second).toMatchObject({
      active: false,
      name: 'nightly',
      config: { url: 'https://ci.example.net/v2', content_type: 'json' },
      events: ['push'],
      branch_filter: '',
      authorization_header: '',
    });
    // `issues` and `pull_request` stand for their sub-events, `_only` for the base event; the
    // authorization header comes back in clear.
    const third = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        ...path,
        body: { events: ['issues', 'pull_request_only'], authorization_header: 'Bearer s3cr3t' },
      }),
    );
    expect(new Set(third.events)).toEqual(
      new Set(['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment', 'pull_request']),
    );
    expect(third.authorization_header).toBe('Bearer s3cr3t');
    expect(
      (
        await apiErrorOf(
          unwrap(
            gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { ...rocket, id: 4999 } }, body: {} }),
          ),
        )
      ).status,
    ).toBe(404);
  });

  it('userCreateOAuth2Application creates an app with fresh ids and a secret shown once', async () => {
    const { gitea } = fresh();
    const body = { name: 'Launch board', redirect_uris: ['https://board.example.net/cb'], confidential_client: true };
    const [one, two] = [
      await unwrap(gitea.POST('/user/applications/oauth2', { body })),
      await unwrap(gitea.POST('/user/applications/oauth2', { body })),
    ];
    expect(one).toMatchObject({
      name: 'Launch board',
      redirect_uris: ['https://board.example.net/cb'],
      confidential_client: true,
      skip_secondary_authorization: false,
    });
    expect(one.id).not.toBe(two.id);
    expect(one.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(one.client_secret).toMatch(/^gto_[a-z0-9]{40,}$/);
    expect(one.client_secret).not.toBe(two.client_secret);
    expect(Date.now() - Date.parse(one.created!)).toBeLessThan(60_000);
    const bad = await apiErrorOf(
      unwrap(gitea.POST('/user/applications/oauth2', { body: { name: 'x', redirect_uris: ['not a url'] } })),
    );
    expect([bad.status, bad.message]).toEqual([
      400,
      'POST /user/applications/oauth2 (userCreateOAuth2Application): 400 invalid redirect URI: not a url',
    ]);
  });

  it('repoMigrate creates the repository under repo_owner with URLs on this host; the same name again is 409', async () => {
    const { gitea } = fresh();
    const body = {
      clone_addr: 'https://git.example.net/upstream/telemetry.git',
      repo_name: 'telemetry',
      repo_owner: 'bluebird',
      description: 'Imported.',
      private: true,
    };
    const repo = await unwrap(gitea.POST('/repos/migrate', { body }));
    const origin = new URL(sandbox.current.baseUrl).origin;
    expect(repo).toMatchObject({
      name: 'telemetry',
      full_name: 'bluebird/telemetry',
      private: true,
      description: 'Imported.',
      original_url: body.clone_addr,
    });
    expect(repo.owner).toMatchObject({ id: 2002, login: 'bluebird' });
    expect(repo.html_url).toBe(`${origin}/bluebird/telemetry`);
    expect(repo.clone_url).toBe(`${origin}/bluebird/telemetry.git`);
    expect(repo.url).toBe(`${origin}/api/v1/repos/bluebird/telemetry`);
    const again = await apiErrorOf(unwrap(gitea.POST('/repos/migrate', { body: { ...body, repo_name: 'Telemetry' } })));
    expect([again.status, (again.body as { message: string }).message]).toEqual([
      409,
      'The repository with the same name already exists.',
    ]);
    // The repository now exists for the other operations: a collaborator can be added to it.
    await unwrap(
      gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
        params: { path: { owner: 'bluebird', repo: 'telemetry', collaborator: 'carol' } },
        body: {},
      }),
    );
    // Without repo_owner it belongs to the caller (alice for a token).
    expect(
      (await unwrap(gitea.POST('/repos/migrate', { body: { clone_addr: body.clone_addr, repo_name: 'mine' } })))
        .full_name,
    ).toBe('alice/mine');
    const unknown = await apiErrorOf(unwrap(gitea.POST('/repos/migrate', { body: { ...body, repo_owner: 'dave' } })));
    expect((unknown.body as { message: string }).message).toBe('user does not exist [uid: 0, name: dave]');
  });

  it('issueRemoveAssignees removes the named users and answers the issue as it now is', async () => {
    const { gitea } = fresh();
    const path = { params: { path: { ...rocket, index: 42 } } } as const;
    const once = await unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', { ...path, body: { assignees: ['bob'] } }),
    );
    expect(once.assignees!.map((user) => user.login)).toEqual(['carol']);
    expect(once.assignee?.login).toBe('carol');
    // Gitea's issue converter answers null, not [], when nobody is assigned.
    const twice = await unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', { ...path, body: { assignees: ['carol'] } }),
    );
    expect(twice.assignees).toBeNull();
    expect(twice.assignee).toBeNull();
    // The handler answers an unknown user or issue with 404, naming it.
    const unknown = await apiErrorOf(
      unwrap(
        gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', { ...path, body: { assignees: ['dave'] } }),
      ),
    );
    expect([unknown.status, (unknown.body as { message: string }).message]).toEqual([
      404,
      'user does not exist [uid: 0, name: dave]',
    ]);
    const noIssue = await apiErrorOf(
      unwrap(
        gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
          params: { path: { ...rocket, index: 99 } },
          body: { assignees: [] },
        }),
      ),
    );
    expect([noIssue.status, (noIssue.body as { message: string }).message]).toEqual([
      404,
      'issue does not exist [id: 0, repo_id: 3001, index: 99]',
    ]);
    // Pull request 43 is an issue too, answered as one.
    const pull = await unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { ...rocket, index: 43 } },
        body: { assignees: ['bob'] },
      }),
    );
    expect(pull).toMatchObject({ number: 43, assignees: null, projects: null, pull_request: { merged: false } });
  });

  it('repoEditPullRequest merges, closes, takes stored labels and milestones, unsets the deadline, and refuses a stale version', async () => {
    const { gitea } = fresh();
    const path = { params: { path: { ...rocket, index: 43 } } } as const;
    const edited = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        ...path,
        body: {
          title: 'Keep every second',
          body: 'Every second counts.',
          labels: [5001, 5002, 99999],
          milestone: 6000,
          state: 'closed',
          assignees: ['carol'],
          content_version: 2,
        },
      }),
    );
    expect(edited).toMatchObject({
      title: 'Keep every second',
      state: 'closed',
      content_version: 3,
      milestone: { id: 6000, title: 'v1.1.0' },
    });
    expect(edited.labels!.map((label) => [label.id, label.name])).toEqual([
      [5002, 'kind/bug'],
      [5001, 'priority/high'],
    ]);
    expect(edited.assignees!.map((user) => user.login)).toEqual(['carol']);
    expect(Date.now() - Date.parse(edited.closed_at!)).toBeLessThan(60_000);
    const stale = await apiErrorOf(
      unwrap(gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { ...path, body: { title: 'x', content_version: 2 } })),
    );
    expect([stale.status, (stale.body as { message: string }).message]).toEqual([409, 'the issue is already changed']);
    const reopened = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        ...path,
        body: { state: 'open', due_date: '2026-07-01T08:00:00Z' },
      }),
    );
    // Only a new description moves content_version on.
    expect(reopened).toMatchObject({
      state: 'open',
      closed_at: null,
      due_date: '2026-07-01T23:59:59Z',
      content_version: 3,
      title: 'Keep every second',
    });
    expect(
      (await unwrap(gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { ...path, body: { unset_due_date: true } })))
        .due_date,
    ).toBeNull();
    // A milestone that does not exist: Gitea does not map the error and answers 500.
    expect(
      (
        await apiErrorOf(
          unwrap(gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { ...path, body: { milestone: 6999 } })),
        )
      ).status,
    ).toBe(500);
  });

  it('userCurrentPostGPGKey stores the key; the same armored key again is 422', async () => {
    const { gitea } = fresh();
    const armored =
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEaBcxABYJKwYBBAHaRw8BAQdAb2sandboxkeybytes0123456789abcdef\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n';
    const key = await unwrap(gitea.POST('/user/gpg_keys', { body: { armored_public_key: armored } }));
    expect(key.key_id).toMatch(/^[0-9A-F]{16}$/);
    expect(key.public_key).toBe(armored);
    const again = await apiErrorOf(unwrap(gitea.POST('/user/gpg_keys', { body: { armored_public_key: armored } })));
    expect([again.status, (again.body as { message: string }).message]).toEqual([
      422,
      'A key with the same id already exists',
    ]);
  });

  it('notifyReadThread sets unread and pinned by to-status; an unknown thread is 404', async () => {
    const { token } = fresh();
    const mark = async (status: string) => {
      const answer = await call(
        new URL(`${sandbox.current.baseUrl}/notifications/threads/10001${status ? `?to-status=${status}` : ''}`),
        'PATCH',
        { headers: { authorization: `token ${token}` } },
      );
      expect(answer.status).toBe(205);
      return JSON.parse(answer.body) as { unread: boolean; pinned: boolean };
    };
    expect(await mark('unread')).toMatchObject({ unread: true, pinned: false });
    expect(await mark('pinned')).toMatchObject({ unread: false, pinned: true });
    expect(await mark('')).toMatchObject({ unread: false, pinned: false });
    const { gitea } = fresh();
    expect((await apiErrorOf(markNotificationThread(gitea, { id: 10099 }))).status).toBe(404);
  });

  it('orgEditLabel merges, stores the colour without #, and the edit shows on pull requests that carry the label', async () => {
    const { gitea } = fresh();
    const label = await unwrap(
      gitea.PATCH('/orgs/{org}/labels/{id}', {
        params: { path: { org: 'acme', id: 5001 } },
        body: { name: 'wontfix', color: '#ABC', is_archived: true },
      }),
    );
    expect(label).toMatchObject({
      name: 'wontfix',
      color: 'aabbcc',
      is_archived: true,
      description: 'Needs attention before the next launch.',
    });
    // Omitting is_archived un-archives, as on Gitea.
    expect(
      (await unwrap(gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: {} })))
        .is_archived,
    ).toBe(false);
    const pull = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { labels: [5001] },
      }),
    );
    expect(pull.labels).toEqual([expect.objectContaining({ id: 5001, name: 'wontfix', color: 'aabbcc' })]);
    await unwrap(
      gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: { name: 'later' } }),
    );
    expect(
      (
        await unwrap(
          gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...rocket, index: 43 } }, body: {} }),
        )
      ).labels![0]!.name,
    ).toBe('later');
  });

  it('renderMarkdown renders the sent text, with Gitea links in comments', async () => {
    const { gitea } = fresh();
    expect(
      await renderMarkdown(gitea, { Text: '# Launch\n\n- [x] fuel\n\n| stage | ok |\n|---|---|\n| 1 | yes |' }),
    ).toBe(
      '<h1>Launch</h1>\n<ul>\n<li>[x] fuel</li>\n</ul>\n<table>\n<thead>\n<tr>\n<th>stage</th>\n<th>ok</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>yes</td>\n</tr>\n</tbody>\n</table>\n',
    );
    const origin = new URL(sandbox.current.baseUrl).origin;
    expect(
      await renderMarkdown(gitea, {
        Text: 'Fixed in #42, thanks @bob!\n<script>x</script>',
        Mode: 'comment',
        Context: '/acme/rocket/src/branch/main',
      }),
    ).toBe(
      `<p>Fixed in <a href="${origin}/acme/rocket/issues/42" class="ref-issue">#42</a>, thanks <a href="${origin}/bob" class="mention">@bob</a>!<br>\n&lt;script&gt;x&lt;/script&gt;</p>\n`,
    );
    expect(await renderMarkdown(gitea, { Text: '' })).toBe('');
  });

  it('orgListTeamMembers reflects a rename (adminRenameUser)', async () => {
    const { gitea } = fresh();
    await unwrap(
      gitea.POST('/admin/users/{username}/rename', {
        params: { path: { username: 'bob' } },
        body: { new_username: 'robert' },
      }),
    );
    const members = await collectAll(gitea, '/teams/{id}/members', { params: { path: { id: 12001 } } });
    expect(members.map((user) => [user.login, user.username, user.html_url])).toEqual([
      ['alice', 'alice', 'https://gitea.example.org/alice'],
      ['robert', 'robert', 'https://gitea.example.org/robert'],
      ['carol', 'carol', 'https://gitea.example.org/carol'],
    ]);
    const page = await gitea.GET('/teams/{id}/members', { params: { path: { id: 12001 }, query: { limit: 2 } } });
    expect(page.response.headers.get('x-total-count')).toBe('3');
    expect(page.response.headers.get('link')).toContain('rel="next"');
  });

  it('updateUserSecret answers 201 for the first PUT of a name and 204 after', async () => {
    const { gitea } = fresh();
    const put = (name: string) =>
      gitea.PUT('/user/actions/secrets/{secretname}', {
        params: { path: { secretname: name } },
        body: { data: 's3cr3t' },
      });
    expect((await put('DEPLOY_TOKEN')).response.status).toBe(201);
    expect((await put('DEPLOY_TOKEN')).response.status).toBe(204);
    // Names are stored upper-cased.
    expect((await put('deploy_token')).response.status).toBe(204);
    expect((await apiErrorOf(unwrap(put('GITEA_TOKEN')))).status).toBe(400);
  });

  it('issueEditMilestone merges, finds by id or by name, sets closed_at, and clears an omitted deadline', async () => {
    const { gitea } = fresh();
    const edit = (id: string, body: EditMilestoneOption) =>
      unwrap(gitea.PATCH('/repos/{owner}/{repo}/milestones/{id}', { params: { path: { ...rocket, id } }, body }));
    const closed = await edit('v1.1.0', { state: 'closed', due_on: '2026-05-01T00:00:00Z' });
    expect(closed).toMatchObject({ id: 6000, state: 'closed', due_on: '2026-05-01T23:59:59Z' });
    expect(Date.now() - Date.parse(closed.closed_at!)).toBeLessThan(60_000);
    // By id, with Go's base prefixes (0x1770 is 6000); no due_on clears the deadline.
    const retitled = await edit('0x1770', { title: 'v1.1.0-uncrewed' });
    expect(retitled).toMatchObject({
      id: 6000,
      title: 'v1.1.0-uncrewed',
      state: 'closed',
      due_on: null,
      description: 'Uncrewed test flight.',
    });
    expect(await edit('6000', { state: 'open' })).toMatchObject({ state: 'open', closed_at: null });
    expect((await apiErrorOf(edit('v9.9.9', {}))).status).toBe(404);
    // Issues and pull requests show the edited milestone.
    await edit('6001', { title: 'v1.2.0-crewed', due_on: '2026-06-30T00:00:00Z' });
    const issue = await unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { ...rocket, index: 42 } },
        body: { assignees: [] },
      }),
    );
    expect(issue.milestone).toMatchObject({ id: 6001, title: 'v1.2.0-crewed', due_on: '2026-06-30T23:59:59Z' });
  });

  it('repoCreateReleaseAttachment stores an attachment with the sent name, its real size, a fresh uuid and download URL', async () => {
    const { gitea } = fresh();
    const bytes = new Uint8Array(1234).fill(7);
    const one = await uploadReleaseAttachment(gitea, {
      ...rocket,
      id: 14001,
      file: new Blob([bytes]),
      name: 'rocket 1.3.tar.gz',
    });
    const two = await uploadReleaseAttachment(gitea, {
      ...rocket,
      id: 14001,
      file: new Blob(['tiny']),
      name: 'notes.txt',
    });
    expect(one).toMatchObject({ name: 'rocket 1.3.tar.gz', size: 1234, download_count: 0 });
    expect(two.size).toBe(4);
    expect(one.uuid).not.toBe(two.uuid);
    expect(one.browser_download_url).toBe(`${new URL(sandbox.current.baseUrl).origin}/attachments/${one.uuid}`);
    expect(
      (await apiErrorOf(uploadReleaseAttachment(gitea, { ...rocket, id: 14999, file: new Blob(['x']), name: 'x' })))
        .status,
    ).toBe(404);
  });

  it('adminRenameUser shows the new login everywhere; a taken name is 422, an unknown user 404', async () => {
    const { gitea } = fresh();
    const rename = (username: string, newName: string) =>
      unwrap(
        gitea.POST('/admin/users/{username}/rename', {
          params: { path: { username } },
          body: { new_username: newName },
        }),
      );
    await rename('alice', 'alicia');
    const pull = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...rocket, index: 43 } }, body: {} }),
    );
    expect(pull.user!.login).toBe('alicia');
    const packages = await unwrap(
      gitea.GET('/packages/{owner}/{type}/{name}', {
        params: { path: { owner: 'acme', type: 'npm', name: 'rocket-sdk' } },
      }),
    );
    expect(packages.map((pkg) => pkg.creator!.login)).toEqual(['alicia', 'alicia']);
    const taken = await apiErrorOf(rename('carol', 'ALICIA'));
    expect([taken.status, (taken.body as { message: string }).message]).toEqual([
      422,
      'user already exists [name: ALICIA]',
    ]);
    expect((await apiErrorOf(rename('carol', 'acme'))).status).toBe(422);
    const unknown = await apiErrorOf(rename('nobody', 'someone'));
    expect([unknown.status, (unknown.body as { message: string }).message]).toEqual([
      404,
      'user redirect does not exist [name: nobody]',
    ]);
    const organization = await apiErrorOf(rename('acme', 'acme-rockets'));
    expect([organization.status, (organization.body as { message: string }).message]).toEqual([
      422,
      'acme is an organization not a user',
    ]);
    // Her own repositories move with the name.
    await unwrap(
      gitea.POST('/repos/migrate', { body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'scratch' } }),
    );
    await rename('alicia', 'ali');
    await unwrap(
      gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
        params: { path: { owner: 'ali', repo: 'scratch', collaborator: 'bob' } },
        body: { permission: 'read' },
      }),
    );
  });

  it('repoAddCollaborator stores the collaborator; permission defaults to write; an unknown user is 422', async () => {
    const { gitea } = fresh();
    const put = (collaborator: string, body: { permission?: 'read' | 'write' | 'admin' }) =>
      gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
        params: { path: { ...rocket, collaborator } },
        body,
      });
    expect((await put('bob', {})).response.status).toBe(204);
    expect((await put('bob', { permission: 'admin' })).response.status).toBe(204);
    const unknown = await apiErrorOf(unwrap(put('dave', {})));
    expect([unknown.status, (unknown.body as { message: string }).message]).toEqual([
      422,
      'user does not exist [uid: 0, name: dave]',
    ]);
    expect(
      (
        await apiErrorOf(
          unwrap(
            gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
              params: { path: { owner: 'acme', repo: 'nope', collaborator: 'bob' } },
              body: {},
            }),
          ),
        )
      ).status,
    ).toBe(404);
  });

  it('listPackageVersions, repoGetKey, ActionsGetWorkflow, issueListIssueCommentAttachments and adminGetAllOrgs answer from the stored world', async () => {
    const { gitea } = fresh();
    expect(
      (await unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { ...rocket, id: 11001 } } })))
        .title,
    ).toBe('ci-runner');
    expect(
      (
        await apiErrorOf(
          unwrap(gitea.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { ...rocket, id: 11002 } } })),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await unwrap(
          gitea.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', {
            params: { path: { ...rocket, workflow_id: 'build.yml' } },
          }),
        )
      ).name,
    ).toBe('Build and test');
    const noWorkflow = await apiErrorOf(
      unwrap(
        gitea.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', {
          params: { path: { ...rocket, workflow_id: 'deploy.yml' } },
        }),
      ),
    );
    expect((noWorkflow.body as { message: string }).message).toBe('workflow "deploy.yml" not found');
    expect(
      (
        await unwrap(
          gitea.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', {
            params: { path: { ...rocket, id: 15001 } },
          }),
        )
      ).map((a) => a.name),
    ).toEqual(['countdown-trace.log', 'launchpad.png']);
    const noComment = await apiErrorOf(
      unwrap(
        gitea.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', { params: { path: { ...rocket, id: 15099 } } }),
      ),
    );
    expect([noComment.status, noComment.body]).toEqual([404, null]);
    expect(
      (await collectAll(gitea, '/admin/orgs', { params: { query: { limit: 2 } } })).map((org) => org.name),
    ).toEqual(['acme', 'bluebird', 'copperhead', 'driftwood', 'ember']);
    expect(
      (
        await unwrap(
          gitea.GET('/packages/{owner}/{type}/{name}', {
            params: { path: { owner: 'acme', type: 'npm', name: 'rocket-sdk' } },
          }),
        )
      ).map((pkg) => pkg.version),
    ).toEqual(['1.2.0', '1.1.0']);
    // The package is looked up by its name in any case; an unknown one is a 404 since Gitea 1.26.
    expect(
      await unwrap(
        gitea.GET('/packages/{owner}/{type}/{name}', {
          params: { path: { owner: 'acme', type: 'npm', name: 'Rocket-SDK' } },
        }),
      ),
    ).toHaveLength(2);
    const noPackage = await apiErrorOf(
      unwrap(
        gitea.GET('/packages/{owner}/{type}/{name}', {
          params: { path: { owner: 'acme', type: 'npm', name: 'other' } },
        }),
      ),
    );
    expect([noPackage.status, (noPackage.body as { message: string }).message]).toEqual([
      404,
      'GetPackageByName: package does not exist',
    ]);
    expect(
      (
        await apiErrorOf(
          unwrap(
            gitea.GET('/packages/{owner}/{type}/{name}', {
              params: { path: { owner: 'dave', type: 'npm', name: 'x' } },
            }),
          ),
        )
      ).status,
    ).toBe(404);
  });
});

describe('worlds', () => {
  it('two credentials in parallel see separate worlds', async () => {
    const [a, b] = [fresh(), fresh()];
    const label = (gitea: GiteaClient, name: string) =>
      unwrap(gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: { name } }));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => label(i % 2 ? a.gitea : b.gitea, `${i % 2 ? 'a' : 'b'}-${i}`)),
    );
    expect(results.every((result, i) => result.name!.startsWith(i % 2 ? 'a-' : 'b-'))).toBe(true);
    expect((await label(a.gitea, 'a-last')).description).toBe('Needs attention before the next launch.');
    const readA = await unwrap(
      a.gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: {} }),
    );
    const readB = await unwrap(
      b.gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: {} }),
    );
    expect([readA.name, readB.name]).toEqual(['a-last', 'b-18']);
  });

  it('POST /__sandbox/reset with the same credential restores the seed of that world only', async () => {
    const [a, b] = [fresh(), fresh()];
    for (const { gitea } of [a, b])
      await unwrap(
        gitea.POST('/admin/users/{username}/rename', {
          params: { path: { username: 'carol' } },
          body: { new_username: 'caroline' },
        }),
      );
    const reset = await call(new URL(`${sandbox.current.origin}/__sandbox/reset`), 'POST', {
      headers: {
        authorization: `token ${a.token}`,
      },
    });
    expect(reset.status).toBe(200);
    expect(JSON.parse(reset.body)).toEqual({ message: "this credential's sandbox world is back to the seed" });
    const logins = async (gitea: GiteaClient) =>
      (await collectAll(gitea, '/teams/{id}/members', { params: { path: { id: 12001 } } })).map((user) => user.login);
    expect(await logins(a.gitea)).toEqual(['alice', 'bob', 'carol']);
    expect(await logins(b.gitea)).toEqual(['alice', 'bob', 'caroline']);
    expect((await call(new URL(`${sandbox.current.origin}/__sandbox/reset`), 'POST')).status).toBe(401);
    expect(
      (
        await call(new URL(`${sandbox.current.origin}/__sandbox/reset`), 'GET', {
          headers: { authorization: `token ${a.token}` },
        })
      ).status,
    ).toBe(405);
  });

  it("GET /version answers the host's version, whatever the credential", async () => {
    for (const headers of [{}, { authorization: `token ${fresh().token}` }]) {
      const answer = await call(new URL(`${sandbox.current.baseUrl}/version`), 'GET', { headers });
      expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { version: MOCK_VERSION }]);
    }
  });

  it('Prefer still answers the documented examples, so error screens can be built', async () => {
    const { token } = fresh();
    const answer = await call(new URL(`${sandbox.current.baseUrl}/orgs/acme/labels/5001`), 'PATCH', {
      headers: { authorization: `token ${token}`, 'content-type': 'application/json', prefer: 'code=422' },
      body: Buffer.from('{"color":"#00aabb"}'),
    });
    expect(answer.status).toBe(422);
    expect(JSON.parse(answer.body)).toEqual({
      message: 'invalid color: #gg0000',
      url: 'https://gitea.example.org/api/swagger',
    });
  });

  it('requests that break the document are refused before the world sees them', async () => {
    const { gitea } = fresh();
    const result = await gitea.PATCH('/orgs/{org}/labels/{id}', {
      params: { path: { org: 'acme', id: 5001 } },
      body: { color: 'not-a-colour' },
    });
    expect(result.response.status).toBe(422);
    expect(
      (await unwrap(gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: {} })))
        .color,
    ).toBe('d93f0b');
  });

  it('drops the least recently used world beyond --max-worlds, and caps the records of a world', async () => {
    const small = await startMockServer({ port: 0, sandbox: { maxWorlds: 2, maxRecords: 3 } });
    try {
      const client = (token: string) => createGiteaClient({ baseUrl: small.baseUrl, auth: { token }, retry: 0 });
      const [first, second, third] = [client('world-1'), client('world-2'), client('world-3')];
      const rename = (gitea: GiteaClient) =>
        unwrap(
          gitea.POST('/admin/users/{username}/rename', {
            params: { path: { username: 'bob' } },
            body: { new_username: 'bobby' },
          }),
        );
      await rename(first);
      await rename(second);
      await rename(third); // world-1 is the least recently used: dropped
      // Still renamed: bob is an old name now, which leads to bobby.
      const again = await call(new URL(`${small.baseUrl}/admin/users/bob/rename`), 'POST', {
        headers: { authorization: 'token world-2', 'content-type': 'application/json' },
        body: Buffer.from('{"new_username":"bobby"}'),
      });
      expect([again.status, again.headers.location]).toEqual([307, '/api/v1/admin/users/bobby/rename']);
      await rename(first); // a fresh world again: bob exists
      const secret = (name: string) =>
        first.PUT('/user/actions/secrets/{secretname}', {
          params: { path: { secretname: name } },
          body: { data: 'x' },
        });
      expect([
        (await secret('A')).response.status,
        (await secret('B')).response.status,
        (await secret('C')).response.status,
      ]).toEqual([201, 201, 201]);
      const full = await apiErrorOf(unwrap(secret('D')));
      expect([full.status, (full.body as { message: string }).message]).toEqual([
        403,
        'this sandbox world is full (3 records created); POST /__sandbox/reset with the same credential starts it afresh',
      ]);
      expect((await secret('A')).response.status).toBe(204); // updates still work
      expect((await apiErrorOf(unwrap(secret('D')))).status).toBe(403); // D was not kept
    } finally {
      await small.close();
    }
  });
});

describe('what the audit of Gitea 1.27.0-dev found, as the sandbox answers it', () => {
  const raw = (token: string, method: string, path: string, body?: string, contentType = 'application/json') =>
    call(new URL(`${sandbox.current.baseUrl}${path}`), method, {
      headers: { authorization: `token ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
      body: body !== undefined ? Buffer.from(body, 'latin1') : undefined,
    });

  it('an old name of a renamed user answers 307 to the new one, on every operation under an owner, query kept', async () => {
    const { gitea, token } = fresh();
    await unwrap(
      gitea.POST('/repos/migrate', {
        body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'scratch', repo_owner: 'carol' },
      }),
    );
    await unwrap(
      gitea.POST('/admin/users/{username}/rename', {
        params: { path: { username: 'carol' } },
        body: { new_username: 'caroline' },
      }),
    );
    const moved = await raw(token, 'PUT', '/repos/carol/scratch/collaborators/bob?x=1', '{}');
    expect([moved.status, moved.headers.location, moved.body]).toEqual([
      307,
      '/api/v1/repos/caroline/scratch/collaborators/bob?x=1',
      '',
    ]);
    // The client follows a redirect that stays on the host, with the same method and body.
    expect(
      (
        await gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
          params: { path: { owner: 'carol', repo: 'scratch', collaborator: 'bob' } },
          body: {},
        })
      ).response.status,
    ).toBe(204);
    // A name nobody ever had names itself in the not-found body.
    const unknown = await raw(token, 'GET', '/repos/nobody/scratch/keys/1');
    expect([unknown.status, JSON.parse(unknown.body)]).toEqual([
      404,
      {
        errors: ['user redirect does not exist [name: nobody]'],
        message: 'GetUserByName',
        url: expect.stringMatching(/\/api\/swagger$/),
      },
    ]);
    const noOrg = await raw(token, 'PATCH', '/orgs/nobody/labels/5001', '{}');
    expect(JSON.parse(noOrg.body)).toMatchObject({
      errors: ['user redirect does not exist [name: nobody]'],
      message: 'GetOrgByName',
    });
  });

  it('repoEditPullRequest: unset_due_date false without a due_date crashes Gitea after saving the title; the zero time removes the deadline', async () => {
    const { gitea, token } = fresh();
    const crashed = await raw(
      token,
      'PATCH',
      '/repos/acme/rocket/pulls/43',
      '{"title":"Saved before the crash","unset_due_date":false}',
    );
    expect([crashed.status, crashed.headers['content-type'], crashed.body]).toEqual([
      500,
      'text/plain; charset=utf-8',
      'Internal Server Error',
    ]);
    const path = { params: { path: { ...rocket, index: 43 } } } as const;
    const after = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { ...path, body: { due_date: '0001-01-01T00:00:00Z' } }),
    );
    expect([after.title, after.due_date, after.url]).toEqual(['Saved before the crash', null, after.html_url]);
  });

  it('renderMarkdown: no text is an answer without body or media type; the file mode finds no renderer', async () => {
    const { token } = fresh();
    const empty = await raw(token, 'POST', '/markdown', '{"Text":null,"Mode":null}');
    expect([empty.status, empty.headers['content-type'], empty.body]).toEqual([200, undefined, '']);
    const file = await raw(token, 'POST', '/markdown', '{"Text":"# x","Mode":"file"}');
    expect([file.status, file.headers['content-type'], file.body]).toEqual([
      422,
      'text/plain; charset=utf-8',
      'unable to find a render\n',
    ]);
  });

  it('issueEditMilestone: a title of spaces empties the title; null, the zero time and the epoch clear the deadline', async () => {
    const { gitea } = fresh();
    const edit = (body: EditMilestoneOption) =>
      unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/milestones/{id}', { params: { path: { ...rocket, id: '6001' } }, body }),
      );
    expect((await edit({ title: '  v1.2.0  ', due_on: '2026-06-30T22:00:00-05:00' })).title).toBe('v1.2.0');
    expect((await edit({ due_on: '2026-06-30T22:00:00-05:00' })).due_on).toBe('2026-06-30T23:59:59Z');
    for (const due_on of [null, '0001-01-01T00:00:00Z', '1970-01-01T00:00:00Z']) {
      await edit({ due_on: '2026-07-01T00:00:00Z' });
      expect((await edit({ due_on })).due_on).toBeNull();
    }
    expect((await edit({ title: '   ' })).title).toBe('');
  });

  it('repoCreateReleaseAttachment: a raw body with application/octet-stream is the file, named by the query; without a name it is 400', async () => {
    const { token } = fresh();
    const uploaded = await raw(
      token,
      'POST',
      '/repos/acme/rocket/releases/14001/assets?name=notes.bin',
      '\u00ff\u0000abc',
      'application/octet-stream',
    );
    expect([uploaded.status, JSON.parse(uploaded.body).name, JSON.parse(uploaded.body).size]).toEqual([
      201,
      'notes.bin',
      5,
    ]);
    const unnamed = await raw(
      token,
      'POST',
      '/repos/acme/rocket/releases/14001/assets',
      'abc',
      'application/octet-stream',
    );
    expect([unnamed.status, JSON.parse(unnamed.body).message]).toEqual([
      400,
      'Could not determine name of attachment.',
    ]);
  });

  it('repoAddCollaborator: an organization is accepted as a collaborator, as Gitea accepts it', async () => {
    const { gitea } = fresh();
    expect(
      (
        await gitea.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
          params: { path: { ...rocket, collaborator: 'bluebird' } },
          body: { permission: null },
        })
      ).response.status,
    ).toBe(204);
  });
});

describe('Gitea details the sandbox follows', () => {
  it.each([
    ['12', 12],
    ['0x1f', 31],
    ['0X1F', 31],
    ['010', 8],
    ['0o17', 15],
    ['0b101', 5],
    ['1_000', 1000],
    ['0_7', 7],
    ['1__0', undefined],
    ['1_', undefined],
    ['0x_1f', 31],
    ['-7', -7],
    ['v1.2.0', undefined],
    ['', undefined],
    ['0', 0],
  ])('milestone ids are read as Go reads %j', (text, value) => {
    expect(parseGoInt(text)).toBe(value);
  });

  it.each([
    ['<p>x</p>', 'text/html'],
    ['<h1>x</h1>', 'text/html'],
    ['  <table>', 'text/html'],
    ['<ul>\n<li>x</li>', 'text/plain'],
    ['<h2>x</h2>', 'text/plain'],
    ['<pre>x', 'text/plain'],
    ['<!-- x -->', 'text/html'],
  ])('renderMarkdown answers %j as %s, as Go sniffs it', (html, type) => {
    expect(sniffedType(html)).toBe(type);
  });
});
