// Compile-time guarantees of the client: wrong bodies, missing or mistyped parameters fail to
// compile, and data narrows to the contract's records.
import { describe, expectTypeOf, it } from 'vitest';
import {
  type APIError,
  type APINotFound,
  type ApiError,
  collectAll,
  createGiteaClient,
  detectServer,
  type GiteaClient,
  markNotificationThread,
  paginate,
  renderMarkdown,
  unwrap,
  uploadReleaseAttachment,
  type Attachment,
  type components,
  type DeployKey,
  type EditHookOption,
  type GPGKey,
  type Hook,
  type Issue,
  type NotificationThread,
  type Organization,
  type Package,
  type PullRequest,
  type Repository,
  type ServerProfile,
  type User,
} from '../../src/index.js';

const client = createGiteaClient({ baseUrl: 'https://gitea.example.org/api/v1', auth: { token: 't' } });
const hook = { owner: 'acme', repo: 'rocket', id: 4001 };

describe('requests that cannot be right do not compile', () => {
  it('rejects a body field the operation does not take', () => {
    // @ts-expect-error `actve` is not a field of EditHookOption
    void client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: hook }, body: { actve: true } });
    void client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
      params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
      // @ts-expect-error `permission` takes read, write or admin only
      body: { permission: 'owner' },
    });
  });

  it('rejects a body field of the wrong type', () => {
    // @ts-expect-error `active` is a boolean
    void client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: hook }, body: { active: 'yes' } });
  });

  it('rejects a missing required body field', () => {
    // @ts-expect-error `repo_name` is required
    void client.POST('/repos/migrate', { body: { clone_addr: 'https://git.example.net/a.git' } });
  });

  it('rejects a missing path parameter', () => {
    // @ts-expect-error `id` is missing
    void client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket' } } });
    // @ts-expect-error no params at all for a path with parameters
    void client.GET('/repos/{owner}/{repo}/keys/{id}');
  });

  it('rejects a parameter of the wrong type', () => {
    void client.GET('/repos/{owner}/{repo}/keys/{id}', {
      // @ts-expect-error `id` is an integer
      params: { path: { owner: 'acme', repo: 'rocket', id: 'eleven' } },
    });
    // @ts-expect-error `limit` is an integer
    void client.GET('/admin/orgs', { params: { query: { limit: '50' } } });
    void client.PATCH('/notifications/threads/{id}', {
      // @ts-expect-error `to-status` takes read, unread or pinned
      params: { path: { id: '1' }, query: { 'to-status': 'archived' } },
    });
  });

  it('rejects a path the contract does not have, and the wrong method', () => {
    // @ts-expect-error not an operation of the contract
    void client.GET('/repos/{owner}/{repo}/nothing');
    // @ts-expect-error repoGetKey is a GET
    void client.DELETE('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'a', repo: 'b', id: 1 } } });
  });

  it("rejects a call's timeoutMs that is not a number", () => {
    void client.POST('/repos/migrate', {
      body: { clone_addr: 'https://git.example.net/a.git', repo_name: 'a' },
      timeoutMs: 0,
    });
    // @ts-expect-error milliseconds, as a number
    void client.GET('/admin/orgs', { timeoutMs: '100' });
  });

  it('rejects an auth that is neither a token nor a user and password', () => {
    // @ts-expect-error a password needs a user name
    createGiteaClient({ baseUrl: 'https://h/api/v1', auth: { password: 'p' } });
  });

  it('rejects paginate on an operation that does not page', () => {
    // @ts-expect-error repoGetKey answers one record
    void paginate(client, '/repos/{owner}/{repo}/keys/{id}');
  });
});

describe('data narrows to the contract records', () => {
  it('narrows data after checking error', async () => {
    const { data, error } = await client.GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
    });
    if (error) {
      expectTypeOf(data).toEqualTypeOf<undefined>();
      return;
    }
    expectTypeOf(data).toEqualTypeOf<DeployKey>();
  });

  it('unwrap resolves to the record', async () => {
    expectTypeOf(
      await unwrap(
        client.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: hook }, body: { active: true } }),
      ),
    ).toEqualTypeOf<Hook>();
    expectTypeOf(await unwrap(client.GET('/admin/orgs'))).toEqualTypeOf<Organization[]>();
  });

  it('the helpers resolve to their records', async () => {
    expectTypeOf(await collectAll(client, '/admin/orgs')).toEqualTypeOf<Organization[]>();
    expectTypeOf(await collectAll(client, '/teams/{id}/members', { params: { path: { id: 1 } } })).toEqualTypeOf<
      User[]
    >();
    for await (const version of paginate(client, '/packages/{owner}/{type}/{name}', {
      params: { path: { owner: 'acme', type: 'npm', name: 'rocket-sdk' } },
    })) {
      expectTypeOf(version).toEqualTypeOf<Package>();
    }
    expectTypeOf(
      await uploadReleaseAttachment(client, { owner: 'a', repo: 'b', id: 1, file: new Blob([]) }),
    ).toEqualTypeOf<Attachment>();
    expectTypeOf(await renderMarkdown(client, { Text: '# hi' })).toEqualTypeOf<string>();
    expectTypeOf(await markNotificationThread(client, { id: 1 })).toEqualTypeOf<NotificationThread | undefined>();
  });

  it('records keep the nullability the server has, and no more', () => {
    expectTypeOf<NonNullable<Organization['visibility']>>().toEqualTypeOf<'public' | 'limited' | 'private'>();
    // Left out for most callers, never null.
    expectTypeOf<DeployKey['repository']>().toEqualTypeOf<Repository | undefined>();
    // Every subkey carries null lists; an issue with nobody assigned has null assignees, a pull request [].
    expectTypeOf<GPGKey['subkeys']>().toEqualTypeOf<GPGKey[] | null | undefined>();
    expectTypeOf<Issue['assignees']>().toEqualTypeOf<User[] | null | undefined>();
    expectTypeOf<PullRequest['assignees']>().toEqualTypeOf<User[] | undefined>();
    expectTypeOf<PullRequest['requested_reviewers']>().toEqualTypeOf<(User | null)[] | undefined>();
    // Gitea sends a hook's authorization header back: readable, not write-only.
    expectTypeOf<Hook['authorization_header']>().toEqualTypeOf<string | undefined>();
  });

  it('request bodies take null for every optional field, as Go clients send them', () => {
    expectTypeOf<{
      active: null;
      authorization_header: null;
      branch_filter: null;
      config: null;
      events: null;
      name: null;
    }>().toMatchTypeOf<EditHookOption>();
    void client.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', {
      params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } },
      body: { permission: null },
    });
  });
});

describe('error reads as a message, and throwOnError types data as there', () => {
  it("error is the service's body or the ApiError, both with a message, whatever the operation declares", async () => {
    const { data, error } = await client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: hook },
      body: { events: ['push'] },
    });
    // The README's lines, as written there.
    if (error) console.error(error.message);
    else expectTypeOf(data).toEqualTypeOf<Hook>();
    if (error) {
      // repoEditHook declares JSON errors and the plain-text 500 of a crash: the text comes as the ApiError.
      expectTypeOf(error).toEqualTypeOf<APIError | APINotFound | ApiError>();
      expectTypeOf(error.message).toEqualTypeOf<string>();
    }
    // renderMarkdown's errors are plain text and its 403 may have no body: still an object with a message.
    const rendered = await client.POST('/markdown', { body: { Text: '# hi' }, parseAs: 'text' });
    if (rendered.error) expectTypeOf(rendered.error.message).toEqualTypeOf<string>();
    expectTypeOf<NonNullable<typeof rendered.error>>().not.toMatchTypeOf<string>();
  });

  it('with throwOnError: true, data is there without narrowing', async () => {
    const strict = createGiteaClient({ baseUrl: 'https://gitea.example.org/api/v1', throwOnError: true });
    const { data } = await strict.GET('/repos/{owner}/{repo}/keys/{id}', {
      params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
    });
    expectTypeOf(data).toEqualTypeOf<DeployKey>();
    const { data: orgs, error } = await strict.GET('/admin/orgs');
    expectTypeOf(orgs).toEqualTypeOf<Organization[]>();
    expectTypeOf(error).toEqualTypeOf<undefined>();
    // Without it, or with a flag known only at run time, data may be missing.
    const maybe = createGiteaClient({ baseUrl: 'https://gitea.example.org/api/v1', throwOnError: Math.random() > 1 });
    expectTypeOf((await maybe.GET('/admin/orgs')).data).toEqualTypeOf<Organization[] | undefined>();
    // The throwing client goes to every helper.
    expectTypeOf(await collectAll(strict, '/admin/orgs')).toEqualTypeOf<Organization[]>();
    expectTypeOf(await unwrap(strict.GET('/admin/orgs'))).toEqualTypeOf<Organization[]>();
    expectTypeOf(await renderMarkdown(strict, { Text: '# hi' })).toEqualTypeOf<string>();
  });
});

describe("a client for a server profile offers that server's operations only", () => {
  const baseUrl = 'https://forgejo.example.org/api/v1';
  const assignees = { params: { path: { owner: 'acme', repo: 'rocket', index: 1 } }, body: { assignees: ['bob'] } };

  it('a call to an operation Forgejo 11 has no route for does not compile', () => {
    const forgejo = createGiteaClient({ baseUrl, server: 'forgejo-11' });
    expectTypeOf(forgejo).toEqualTypeOf<GiteaClient<false, 'forgejo-11'>>();
    // @ts-expect-error Forgejo 11 has no route for issueRemoveAssignees (E4)
    void forgejo.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', assignees);
    // @ts-expect-error nor for listPackageVersions (E7)
    void forgejo.GET('/packages/{owner}/{type}/{name}', {
      params: { path: { owner: 'acme', type: 'npm', name: 'rocket' } },
    });
    // What Forgejo has still compiles, with its records.
    expectTypeOf(forgejo.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: hook }, body: { active: true } }))
      .resolves.toHaveProperty('data')
      .toEqualTypeOf<Hook | undefined>();
    // The same call to the base, Gitea 1.27, compiles.
    void client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', assignees);
  });

  it('Gitea 1.24 lacks E4 alone, and a detected profile types the client by its union', async () => {
    const old = createGiteaClient({ baseUrl, server: 'gitea-1.24', throwOnError: true });
    expectTypeOf(old).toEqualTypeOf<GiteaClient<true, 'gitea-1.24'>>();
    // @ts-expect-error Gitea 1.24 has no route for issueRemoveAssignees (E4)
    void old.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', assignees);
    void old.GET('/packages/{owner}/{type}/{name}', { params: { path: { owner: 'acme', type: 'npm', name: 'x' } } });
    const { profile } = await detectServer(client);
    expectTypeOf(profile).toEqualTypeOf<ServerProfile>();
    const detected = createGiteaClient({ baseUrl, server: profile });
    // @ts-expect-error a profile known only at run time offers what every server has
    void detected.GET('/repos/{owner}/{repo}/actions/workflows/{workflow_id}', {
      params: { path: { owner: 'acme', repo: 'rocket', workflow_id: 'ci.yml' } },
    });
    // A client of any profile goes to every helper.
    expectTypeOf(await collectAll(detected, '/admin/orgs')).toEqualTypeOf<Organization[]>();
    expectTypeOf(await renderMarkdown(old, { Text: '# hi' })).toEqualTypeOf<string>();
  });
});

describe('records carry every field any profile sends', () => {
  it("Forgejo's fields are optional fields of the records, requests stay the base's", () => {
    expectTypeOf<User['pronouns']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Repository['wiki_branch']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PullRequest['flow']>().toEqualTypeOf<0 | 1 | undefined>();
    expectTypeOf<Attachment['type']>().toEqualTypeOf<'attachment' | 'external' | undefined>();
    expectTypeOf<Hook['content_type']>().toEqualTypeOf<'json' | 'form' | undefined>();
    // A Gitea record without them is still a record.
    expectTypeOf<Omit<User, 'pronouns'>>().toMatchTypeOf<User>();
    // E16's external_url is a field only Forgejo reads: a request does not take it.
    expectTypeOf<components['schemas']['ReleaseAttachmentUpload']>().not.toHaveProperty('external_url');
  });
});
