// Testing the states a real server rarely shows on demand, against gitea-mock's MSW handlers: the
// spinner of a slow answer (`Prefer: delay`), and Gitea in maintenance (`Prefer: fault=503`) with
// the client's retries seen in the journal of requests. Run it with
// `npx vitest run examples/slow-and-down.test.mjs` (vitest, msw, gitea-contract and gitea-mock installed).
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createGiteaClient } from 'gitea-contract';
import { createGiteaHandlers } from 'gitea-mock/msw';

/** The code under test: a deploy key screen, which says what it is doing through `show`. */
async function loadKey(client, show) {
  show('loading');
  const { data, response } = await client.GET('/repos/{owner}/{repo}/keys/{id}', {
    params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } },
  });
  show(data ? `key ${data.title}` : `error ${response.status}`);
}

const baseUrl = 'https://gitea.example.org/api/v1';
const gitea = createGiteaHandlers({ baseUrl });
const server = setupServer(...gitea.handlers);
/** A client whose every request asks the mock for `prefer`. */
const client = (prefer) => createGiteaClient({ baseUrl, auth: { token: 'key-screen' }, headers: { Prefer: prefer } });

// The first answer compiles the operation's checks: a second or more on a busy machine. Done once
// here, under a hook's bound of a minute, not in the first test, which Vitest gives 5 s.
beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  await loadKey(client(''), () => {});
}, 60_000);
afterEach(() => gitea.reset());
afterAll(async () => {
  server.close();
  await gitea.close();
});

it('shows the spinner while the answer is on its way', async () => {
  const shown = [];
  const loading = loadKey(client('delay=400'), (state) => shown.push(state));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(shown).toEqual(['loading']);
  await loading;
  expect(shown).toEqual(['loading', 'key ci-runner']);
});

// Two seconds of it are the client's waits before its retries.
it('retries Gitea in maintenance twice, then shows the error', { timeout: 20_000 }, async () => {
  const shown = [];
  await loadKey(client('fault=503'), (state) => shown.push(state));
  expect(shown).toEqual(['loading', 'error 503']);
  // Three requests went out: the first and the client's two retries, each after Retry-After: 1.
  const sent = await gitea.requests({ token: 'key-screen' });
  expect(sent.map(({ operationId, status }) => `${operationId} ${status}`)).toEqual([
    'repoGetKey 503',
    'repoGetKey 503',
    'repoGetKey 503',
  ]);
});
