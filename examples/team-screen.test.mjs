// Testing a screen's data code against gitea-mock's MSW handlers: no server to start, no port,
// and the sandbox remembers what the screen writes, as a Gitea server would. Run it with
// `npx vitest run examples/team-screen.test.mjs` (vitest, msw, gitea-contract and gitea-mock
// installed).
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ApiError, createGiteaClient } from 'gitea-contract';
import { createGiteaHandlers } from 'gitea-mock/msw';

/** The code under test: what a team screen shows, or the message it shows instead. */
async function loadTeamScreen(client, teamId) {
  try {
    const { data } = await client.GET('/teams/{id}/members', { params: { path: { id: teamId } } });
    return { members: data.map((user) => user.login).sort() };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { message: 'This team no longer exists.' };
    throw error;
  }
}

/** The screen's rename action: renames a member, then shows the team again. */
async function renameMember(client, teamId, from, to) {
  await client.POST('/admin/users/{username}/rename', {
    params: { path: { username: from } },
    body: { new_username: to },
  });
  return loadTeamScreen(client, teamId);
}

const baseUrl = 'https://gitea.example.org/api/v1';
const gitea = createGiteaHandlers({ baseUrl, sandbox: true });
const server = setupServer(...gitea.handlers);
const client = createGiteaClient({ baseUrl, auth: { token: 'team-screen-test' }, throwOnError: true });

// Each operation's first answer compiles its checks and makes the seed world: a second or more
// on a busy machine. Done once here, in a world of its own and under a hook's bound of a minute,
// not in the first test, which Vitest gives 5 s.
beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  const warmUp = createGiteaClient({ baseUrl, auth: { token: 'warm-up' }, throwOnError: true });
  await renameMember(warmUp, 12001, 'bob', 'robert');
  await gitea.reset();
}, 60_000);
afterEach(() => gitea.reset());
afterAll(async () => {
  server.close();
  await gitea.close();
});

it('shows the members of the team', async () => {
  expect(await loadTeamScreen(client, 12001)).toEqual({ members: ['alice', 'bob', 'carol'] });
});

it('shows a renamed member under the new name', async () => {
  expect(await renameMember(client, 12001, 'bob', 'robert')).toEqual({ members: ['alice', 'carol', 'robert'] });
  // The world itself, for assertions a screen does not show.
  const world = await gitea.world({ token: 'team-screen-test' });
  expect(world.users.some((user) => user.login === 'robert')).toBe(true);
});

it('says so when the team is gone', async () => {
  expect(await loadTeamScreen(client, 999)).toEqual({ message: 'This team no longer exists.' });
});
