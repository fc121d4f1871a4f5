// The webhook deliveries of `gitea-mock/msw` (the built handlers in setupServer): recorded as the
// server would send them, signed, per credential and for every world, handed to onDelivery,
// forgotten by reset(), never sent (a receiver on loopback gets nothing), and a hook whose type
// Gitea converts (Slack) recorded as skipped. examples/pull-request-bot.test.mjs is the test a
// user copies.
import { fileURLToPath } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGiteaClient, unwrap } from '../src/index.js';
import type { DeliveryRecord } from '../mock/src/webhooks/deliveries.js';
import { expectSignedBy, startHookReceiver, type HookReceiver } from './support/hook-receiver.js';

type MswModule = typeof import('../mock/src/msw/handlers.js');
const BUILT = fileURLToPath(new URL('../mock/dist/msw.mjs', import.meta.url));
const { createGiteaHandlers } = (await import(BUILT)) as MswModule;

const BASE = 'https://gitea.example.org/api/v1';
const SECRET = 'msw-hook-secret';
const rocket = { owner: 'acme', repo: 'rocket' } as const;
const settled: DeliveryRecord[] = [];
let receiver: HookReceiver;

const gitea = createGiteaHandlers({
  baseUrl: BASE,
  sandbox: {
    webhooks: { secret: SECRET, systemHooks: ['https://bots.example.net/all'] },
    // Every world starts with a Slack hook on acme/rocket too.
    prepare: (seed) => {
      seed.hooks.push({
        repo: seed.hooks[0]!.repo,
        hook: { ...structuredClone(seed.hooks[0]!.hook), id: 4002, type: 'slack', events: ['pull_request'] },
      });
    },
  },
  onDelivery: (delivery) => settled.push(delivery),
});
const server = setupServer(...gitea.handlers);

beforeAll(async () => {
  receiver = await startHookReceiver();
  server.listen({ onUnhandledRequest: 'error' });
});
afterAll(async () => {
  server.close();
  await gitea.close();
  await receiver.close();
});

const client = (token: string) => createGiteaClient({ baseUrl: BASE, auth: { token }, retry: 0 });

describe('createGiteaHandlers records webhook deliveries', () => {
  it('per world and for all, signed, settled through onDelivery, never sent, and forgotten by reset()', async () => {
    const alice = client('msw-alice');
    await unwrap(
      alice.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${receiver.origin}/hook` }, events: ['pull_request'] },
      }),
    );
    await unwrap(
      alice.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );
    await unwrap(
      client('msw-bob').PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );

    const mine = await gitea.deliveries({ token: 'msw-alice' });
    // To alice's hook, her Slack hook and the system hook; bob's world has the Slack and the system hook.
    expect(mine.map((entry) => [entry.type, entry.action, entry.hook.type, entry.hook.target])).toEqual([
      ['pull_request', 'closed', 'gitea', 'repository'],
      ['pull_request', 'closed', 'slack', 'repository'],
      ['pull_request', 'closed', 'gitea', 'system'],
    ]);
    const all = await gitea.deliveries();
    expect(all).toHaveLength(5);
    expect(all.slice(0, 3).map((entry) => entry.id)).toEqual(mine.map((entry) => entry.id));
    await expectSignedBy(
      {
        headers: Object.fromEntries(
          Object.entries(mine[0]!.headers).map(([name, value]) => [name.toLowerCase(), value]),
        ),
        body: mine[0]!.body,
      },
      SECRET,
    );

    await expect.poll(() => settled.length).toBe(5);
    expect(settled.map((entry) => entry.state)).toEqual(['recorded', 'skipped', 'recorded', 'skipped', 'recorded']);
    expect(settled[1]!.error).toBe('not sent: Gitea converts the payload for slack hooks, which gitea-mock does not');
    expect(receiver.received).toEqual([]);

    await gitea.reset();
    expect(await gitea.deliveries()).toEqual([]);
  });
});
