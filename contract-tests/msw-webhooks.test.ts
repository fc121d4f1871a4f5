// The webhook deliveries of `gitea-mock/msw` (the built handlers in setupServer): recorded as the
// server would send them, signed, per credential and for every world, handed to onDelivery,
// forgotten by reset(), never sent (a receiver on loopback gets nothing), and a hook whose type
// Gitea converts (Slack) recorded as skipped. examples/pull-request-bot.test.mjs is the test a
// user copies.
import { fileURLToPath } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGiteaClient, unwrap } from '../src/index.js';
import { createSchemaValidator, type DeliveryRecord, loadDocument } from '../test/support/mock-internals.js';
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

  it('without onDelivery, a delivery read from the log long after its write is signed, its headers plain data', async () => {
    const base = 'https://unwatched.example.org/api/v1';
    const unwatched = createGiteaHandlers({
      baseUrl: base,
      sandbox: { webhooks: { secret: SECRET, systemHooks: ['https://bots.example.net/all'] } },
    });
    server.use(...unwatched.handlers);
    try {
      const erin = createGiteaClient({ baseUrl: base, auth: { token: 'msw-erin' }, retry: 0 });
      await unwrap(
        erin.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { state: 'closed' },
        }),
      );
      // Several turns: the delivery is built, logged and settled before anything reads it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [delivery] = await unwatched.deliveries({ token: 'msw-erin' });
      expect(delivery).toMatchObject({ state: 'recorded', type: 'pull_request', action: 'closed' });
      const { headers } = JSON.parse(JSON.stringify(delivery)) as DeliveryRecord;
      expect(headers).toEqual(delivery!.headers);
      const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
      await expectSignedBy({ headers: lower, body: delivery!.body }, SECRET);
    } finally {
      server.resetHandlers();
      await unwatched.close();
    }
  });
});

describe('what the handlers hand out of a delivery', () => {
  it('copies: an edit of one changes neither the log nor what onDelivery or a later call reads', async () => {
    const before = settled.length;
    await unwrap(
      client('msw-carol').PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );
    await expect.poll(() => settled.length).toBe(before + 2);
    const [first] = await gitea.deliveries({ token: 'msw-carol' });
    const original = structuredClone(first!);
    Object.assign(first!, { state: 'delivered', body: 'edited' });
    first!.headers['X-Gitea-Event'] = 'edited';
    first!.hook.type = 'edited';
    const handed = settled.find((entry) => entry.id === original.id)!;
    handed.headers['X-Gitea-Signature'] = 'edited';
    handed.body = 'edited too';
    const [again] = await gitea.deliveries({ token: 'msw-carol' });
    expect(again).toEqual(original);
    expect((await gitea.deliveries()).find((entry) => entry.id === original.id)).toEqual(again);
  });

  it('an async onDelivery that rejects is told on the console once, and ends nothing', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const base = 'https://rejecting.example.org/api/v1';
    const rejecting = createGiteaHandlers({
      baseUrl: base,
      sandbox: true,
      onDelivery: async (delivery) => {
        throw new Error(`this test takes no ${delivery.type}`);
      },
    });
    server.use(...rejecting.handlers);
    try {
      const dave = createGiteaClient({ baseUrl: base, auth: { token: 'msw-dave' }, retry: 0 });
      await unwrap(
        dave.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: { config: { url: `${receiver.origin}/hook` }, events: ['pull_request'] },
        }),
      );
      await unwrap(
        dave.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { state: 'closed' },
        }),
      );
      await expect.poll(() => errors.mock.calls.length).toBe(1);
      const [id] = (await rejecting.deliveries({ token: 'msw-dave' })).map((entry) => entry.id);
      expect(errors.mock.calls[0]).toEqual([
        `gitea-mock: onDelivery failed for delivery ${id} (pull_request closed):`,
        new Error('this test takes no pull_request'),
      ]);
      // A turn for a rejection nobody handled to be told.
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      errors.mockRestore();
      server.resetHandlers();
      await rejecting.close();
    }
  });
});

describe('redeliver and waitForDelivery', () => {
  it('waitForDelivery resolves with the first settled delivery of an event and action; redeliver records it again', async () => {
    const erin = client('msw-erin');
    await unwrap(
      erin.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${receiver.origin}/hook` }, events: ['pull_request'] },
      }),
    );
    const waited = gitea.waitForDelivery({
      event: 'pull_request',
      action: 'closed',
      credential: { token: 'msw-erin' },
    });
    await unwrap(
      erin.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );
    const first = await waited;
    expect([first.type, first.action, first.state, first.hook.id]).toEqual([
      'pull_request',
      'closed',
      'recorded',
      4001,
    ]);

    const again = await gitea.redeliver({ token: 'msw-erin' }, first.id);
    expect(again.id).not.toBe(first.id);
    expect(again.body).toBe(first.body);
    expect({ ...again.headers, 'X-Gitea-Delivery': '', 'X-Gogs-Delivery': '', 'X-GitHub-Delivery': '' }).toEqual({
      ...first.headers,
      'X-Gitea-Delivery': '',
      'X-Gogs-Delivery': '',
      'X-GitHub-Delivery': '',
    });
    expect(again.headers['X-Gitea-Delivery']).toBe(again.id);
    expect((await gitea.deliveries({ token: 'msw-erin' })).at(-1)!.id).toBe(again.id);
    // The same through the handlers, as an app would call the endpoint.
    const answer = await fetch(`https://gitea.example.org/__sandbox/deliveries/${first.id}/redeliver`, {
      method: 'POST',
      headers: { Authorization: 'token msw-erin' },
    });
    expect(answer.status).toBe(201);
    expect(((await answer.json()) as DeliveryRecord).body).toBe(first.body);
    expect(receiver.received).toEqual([]);

    await expect(gitea.redeliver({ token: 'msw-erin' }, 'no-such-id')).rejects.toThrow(
      "no delivery no-such-id in this credential's log",
    );
    await expect(gitea.waitForDelivery({ event: 'push', timeoutMs: 50 })).rejects.toThrow(
      'no push delivery settled within 50 ms',
    );
  });
});

describe('trigger', () => {
  it("fires an event in a credential's world: recorded for the hooks that take it and the system hooks, valid for its schema", async () => {
    const deliveries = await gitea.trigger({
      event: 'issue_comment',
      action: 'created',
      repository: 'acme/rocket',
      credential: { token: 'msw-frank' },
    });
    // The seed's hook takes push and release only; the Slack hook pull requests.
    expect(deliveries.map((entry) => [entry.type, entry.action, entry.hook.target])).toEqual([
      ['issue_comment', 'created', 'system'],
    ]);
    const payload = JSON.parse(deliveries[0]!.body);
    const schemas = createSchemaValidator(loadDocument(new URL('../openapi.yaml', import.meta.url)));
    expect(schemas.check('/webhooks/issue_comment/post/requestBody/content/application~1json/schema', payload)).toEqual(
      [],
    );
    expect([payload.issue.number, payload.repository.full_name, payload.sender.login]).toEqual([
      42,
      'acme/rocket',
      'alice',
    ]);
    const waited = await gitea.waitForDelivery({ event: 'issue_comment', credential: { token: 'msw-frank' } });
    expect([waited.id, waited.state]).toEqual([deliveries[0]!.id, 'recorded']);
    await expect(
      gitea.trigger({ event: 'push', repository: 'acme/none', credential: { token: 'msw-frank' } }),
    ).rejects.toThrow("no repository acme/none in this credential's sandbox world");
    // The same through the handlers.
    const answer = await fetch('https://gitea.example.org/__sandbox/trigger', {
      method: 'POST',
      headers: { Authorization: 'token msw-frank', 'Content-Type': 'application/json' },
      body: JSON.stringify({ event: 'release', action: 'published', repository: 'acme/rocket' }),
    });
    expect(answer.status).toBe(201);
    const fired = ((await answer.json()) as { deliveries: DeliveryRecord[] }).deliveries;
    expect(fired.map((entry) => [entry.type, entry.hook.id, entry.hook.target])).toEqual([
      ['release', 4001, 'repository'],
      ['release', 1, 'system'],
    ]);
    expect(receiver.received).toEqual([]);
  });
});
