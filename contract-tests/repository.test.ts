// repository: repoMigrate, ActionsGetWorkflow, repoAddCollaborator,
// repoEditHook, repoGetKey, repoEditPullRequest, repoCreateReleaseAttachment.
import { expect, inject, it } from 'vitest';
import { createGiteaClient, uploadReleaseAttachment, type GiteaClient } from '../src/index.js';
import { describeContract, type Extra } from './support/contract.js';

const repo = { owner: 'acme', repo: 'rocket' };
const MIGRATE = {
  clone_addr: 'https://git.example.net/upstream/launchpad.git',
  repo_name: 'launchpad',
  repo_owner: 'acme',
  service: 'gitea',
  issues: true,
} as const;

/** repoCreateReleaseAttachment through the client: the file as the multipart part `attachment`. */
function upload(client: GiteaClient, extra: Extra, form = attachmentForm()) {
  return client.POST('/repos/{owner}/{repo}/releases/{id}/assets', {
    params: { path: { ...repo, id: 14001 }, query: { name: 'rocket-1.2.0-linux-amd64.tar.gz' } },
    body: form as never,
    bodySerializer: (body: unknown) => body as FormData,
    ...extra,
  });
}
function attachmentForm(part = 'attachment'): FormData {
  const form = new FormData();
  form.append(part, new Blob(['tarball bytes']), 'rocket.tar.gz');
  return form;
}

describeContract('repository', {
  repoMigrate: {
    call: (client, extra) => client.POST('/repos/migrate', { body: MIGRATE, ...extra }),
    invalid: {
      'a missing repository name': (client) =>
        client.POST('/repos/migrate', { body: { clone_addr: MIGRATE.clone_addr } as never }),
      'an unknown service': (client) =>
        client.POST('/repos/migrate', { body: { ...MIGRATE, service: 'svn' as never } }),
      'a repository name with a slash': (client) =>
        client.POST('/repos/migrate', { body: { ...MIGRATE, repo_name: 'acme/launchpad' } }),
    },
  },
  ActionsGetWorkflow: {
    call: (client, extra) =>
      client.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', {
        params: { path: { ...repo, workflow_id: 'build.yml' } },
        ...extra,
      }),
    // Every parameter is a free string, so no request can break the document; the client still
    // refuses values that would leave the path (see test/client), and Prefer asks for the 422.
    invalid: {},
  },
  repoAddCollaborator: {
    call: (client, extra) =>
      client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
        params: { path: { ...repo, collaborator: 'bob' } },
        body: { permission: 'write' },
        ...extra,
      }),
    invalid: {
      'an unknown permission': (client) =>
        client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
          params: { path: { ...repo, collaborator: 'bob' } },
          body: { permission: 'owner' as never },
        }),
    },
  },
  repoEditHook: {
    call: (client, extra) =>
      client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...repo, id: 4001 } },
        body: { active: true, branch_filter: 'main', events: ['push', 'release'] },
        ...extra,
      }),
    invalid: {
      'an active flag that is not a boolean': (client) =>
        client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...repo, id: 4001 } },
          body: { active: 'yes' as never },
        }),
      'a target URL that is not a URL': (client) =>
        client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...repo, id: 4001 } },
          body: { config: { url: 'not a url' } },
        }),
    },
  },
  repoGetKey: {
    call: (client, extra) =>
      client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { ...repo, id: 11001 } }, ...extra }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
  repoEditPullRequest: {
    call: (client, extra) =>
      client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...repo, index: 43 } },
        body: { title: 'Fix countdown off-by-one', content_version: 2 },
        ...extra,
      }),
    invalid: {
      'an unknown state': (client) =>
        client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...repo, index: 43 } },
          body: { state: 'merged' as never },
        }),
      'labels that are not ids': (client) =>
        client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...repo, index: 43 } },
          body: { labels: ['kind/bug'] as never },
        }),
    },
  },
  repoCreateReleaseAttachment: {
    call: (client, extra) => upload(client, extra),
    invalid: {
      'a form without the attachment part': (client) => upload(client, {}, attachmentForm('file')),
    },
  },
});

it('uploadReleaseAttachment (the helper) sends a Blob, a File and bytes', async () => {
  const client = createGiteaClient({ baseUrl: inject('mockBaseUrl'), auth: { token: 'contract-test-token' } });
  for (const file of [new Blob(['x']), new File(['x'], 'a.txt'), new Uint8Array([1, 2, 3]), new ArrayBuffer(4)]) {
    await expect(
      uploadReleaseAttachment(client, { ...repo, id: 14001, file, name: 'asset.bin' }),
    ).resolves.toMatchObject({ id: 13001 });
  }
});
