// Testing a bot's webhook code against gitea-mock's MSW handlers: the app's writes go to the
// sandbox, which records the deliveries a Gitea server would send for them, signed; the test
// hands each to the bot as the server would post it. No server, no port, no receiver. Run it with
// `npx vitest run examples/pull-request-bot.test.mjs` (vitest, msw, gitea-contract and gitea-mock
// installed).
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createGiteaClient, parseWebhook } from 'gitea-contract';
import { createGiteaHandlers } from 'gitea-mock/msw';

const SECRET = 'bot-secret';

/** The code under test: what the bot says about a delivery, or undefined for one it ignores. */
async function onWebhook(request) {
  const delivery = await parseWebhook(request, { secret: SECRET });
  if (delivery.known && delivery.type === 'pull_request' && delivery.payload.action === 'closed')
    return `#${delivery.payload.number} closed by ${delivery.payload.sender.login}: thanks!`;
  return undefined;
}

/** A recorded delivery as the server would post it to the hook. */
const asRequest = (delivery) =>
  new Request(delivery.url, { method: delivery.method, headers: delivery.headers, body: delivery.body });

const baseUrl = 'https://gitea.example.org/api/v1';
const seen = [];
const gitea = createGiteaHandlers({
  baseUrl,
  sandbox: { webhooks: { secret: SECRET } },
  onDelivery: (delivery) => seen.push(delivery),
});
const server = setupServer(...gitea.handlers);
const client = createGiteaClient({ baseUrl, auth: { token: 'bot-test' }, throwOnError: true });
const rocket = { owner: 'acme', repo: 'rocket' };

// Each operation's first answer compiles its checks and makes the seed world: a second or more
// on a busy machine. Done once here, in a world of its own and under a hook's bound of a minute,
// not in the first test, which Vitest gives 5 s.
beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  const warmUp = createGiteaClient({ baseUrl, auth: { token: 'warm-up' }, throwOnError: true });
  await warmUp.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { ...rocket, id: 4001 } }, body: {} });
  await warmUp.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...rocket, index: 43 } }, body: {} });
  await gitea.reset();
}, 60_000);
afterEach(async () => {
  await gitea.reset();
  seen.length = 0;
});
afterAll(async () => {
  server.close();
  await gitea.close();
});

it('thanks whoever closes a pull request', async () => {
  await client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
    params: { path: { ...rocket, id: 4001 } },
    body: { config: { url: 'https://bot.example.net/hook', content_type: 'json' }, events: ['pull_request'] },
  });
  await client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
    params: { path: { ...rocket, index: 43 } },
    body: { state: 'closed' },
  });
  const deliveries = await gitea.deliveries({ token: 'bot-test' });
  expect(deliveries.map((delivery) => [delivery.type, delivery.action])).toEqual([['pull_request', 'closed']]);
  expect(await onWebhook(asRequest(deliveries[0]))).toBe('#43 closed by alice: thanks!');
  // onDelivery has them too, once they are settled.
  await expect.poll(() => seen.map((delivery) => delivery.id)).toEqual([deliveries[0].id]);
});

it('says nothing when a title changes, and refuses a forged delivery', async () => {
  await client.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
    params: { path: { ...rocket, id: 4001 } },
    body: { config: { url: 'https://bot.example.net/hook' }, events: ['pull_request'] },
  });
  await client.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
    params: { path: { ...rocket, index: 43 } },
    body: { title: 'Countdown, fixed' },
  });
  const [edited] = await gitea.deliveries({ token: 'bot-test' });
  expect(await onWebhook(asRequest(edited))).toBeUndefined();
  const forged = asRequest({ ...edited, body: edited.body.replace('"edited"', '"closed"') });
  await expect(onWebhook(forged)).rejects.toMatchObject({ name: 'WebhookError', status: 401 });
});
