// What a bot author does with the sandbox's delivery log, against the built bin: sends a logged
// delivery again (the same body and signatures under a new delivery id, as Gitea's replay sends
// it), waits for a delivery without polling (a bounded long poll), and edits a hook without its
// answer ever echoing a `secret` or an `http_method` (repoEditHook keeps only what Gitea keeps).
import { describe, expect, it } from 'vitest';
import { unwrap } from '../src/index.js';
import type { DeliveryRecord } from '../test/support/mock-internals.js';
import { expectSignedBy } from './support/hook-receiver.js';
import type { Launched } from './support/launch.js';
import { builtSandboxes } from './support/sandbox-bin.js';

const rocket = { owner: 'acme', repo: 'rocket' } as const;
const SECRET = 'replay-secret';
const { bin: sandbox, receiver, clientOf } = builtSandboxes();

/** The built sandbox, its deliveries signed with `secret` (GITEA_WEBHOOK_SECRET) when one is given. */
const bin = (args: string[] = [], secret?: string): Promise<Launched> =>
  sandbox(args, [], secret === undefined ? process.env : { ...process.env, GITEA_WEBHOOK_SECRET: secret });

const originOf = (launched: Launched): string => new URL(launched.baseUrl).origin;

async function sandboxCall(
  launched: Launched,
  token: string,
  method: string,
  path: string,
): Promise<{ status: number; body: any }> {
  const answer = await fetch(`${originOf(launched)}${path}`, { method, headers: { Authorization: `token ${token}` } });
  const text = await answer.text();
  return { status: answer.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Points hook 4001 at `url` for pull requests and closes pull request 43: one delivery. */
async function closePull(launched: Launched, token: string, url: string): Promise<void> {
  const gitea = clientOf(launched, token);
  await unwrap(
    gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: { ...rocket, id: 4001 } },
      body: { config: { url, content_type: 'json' }, events: ['pull_request'] },
    }),
  );
  await unwrap(
    gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
      params: { path: { ...rocket, index: 43 } },
      body: { state: 'closed' },
    }),
  );
}

describe('POST /__sandbox/deliveries/{id}/redeliver', () => {
  it('sends a logged delivery again: the same body and signatures under a new delivery id, logged, 201', async () => {
    const hook = await receiver();
    const mock = await bin([], SECRET);
    await closePull(mock, 'replay', `${hook.origin}/hook`);
    const waited = await sandboxCall(mock, 'replay', 'GET', '/__sandbox/deliveries?event=pull_request&wait=20');
    expect(waited.status).toBe(200);
    const [first] = waited.body.deliveries as DeliveryRecord[];
    const [original] = await hook.waitFor([first!.id]);

    const again = await sandboxCall(mock, 'replay', 'POST', `/__sandbox/deliveries/${first!.id}/redeliver`);
    expect(again.status).toBe(201);
    const redelivered = again.body as DeliveryRecord;
    expect(redelivered.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(redelivered.id).not.toBe(first!.id);
    expect([redelivered.type, redelivered.action, redelivered.hook, redelivered.body]).toEqual([
      'pull_request',
      'closed',
      first!.hook,
      first!.body,
    ]);
    const [replayed] = await hook.waitFor([redelivered.id]);
    expect(replayed!.body).toBe(original!.body);
    await expectSignedBy(replayed!, SECRET);
    const headers = (received: typeof replayed) =>
      Object.fromEntries(Object.entries(received!.headers).filter(([name]) => !/^(host|connection)$/.test(name)));
    const delivery = (id: string) => ({
      'x-gitea-delivery': id,
      'x-gogs-delivery': id,
      'x-github-delivery': id,
    });
    expect(headers(replayed)).toEqual({ ...headers(original), ...delivery(redelivered.id) });

    const log = (await sandboxCall(mock, 'replay', 'GET', '/__sandbox/deliveries')).body.deliveries as DeliveryRecord[];
    expect(log.map((entry) => entry.id)).toEqual([first!.id, redelivered.id]);
  });

  it('goes to the hook as it is now, as Gitea replays a task: a new address and content type, the same payload and signatures', async () => {
    const [before, after] = [await receiver(), await receiver()];
    const mock = await bin([], SECRET);
    await closePull(mock, 'moved', `${before.origin}/hook`);
    const waited = await sandboxCall(mock, 'moved', 'GET', '/__sandbox/deliveries?wait=20');
    const [first] = waited.body.deliveries as DeliveryRecord[];
    const [original] = await before.waitFor([first!.id]);
    await unwrap(
      clientOf(mock, 'moved').PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${after.origin}/moved`, content_type: 'form' }, events: ['pull_request'] },
      }),
    );
    const again = (await sandboxCall(mock, 'moved', 'POST', `/__sandbox/deliveries/${first!.id}/redeliver`))
      .body as DeliveryRecord;
    expect(again.url).toBe(`${after.origin}/moved`);
    const [moved] = await after.waitFor([again.id]);
    expect([moved!.path, moved!.headers['content-type']]).toEqual(['/moved', 'application/x-www-form-urlencoded']);
    expect(new URLSearchParams(moved!.body).get('payload')).toBe(original!.body);
    expect(moved!.headers['x-gitea-signature']).toBe(original!.headers['x-gitea-signature']);
    await expectSignedBy(moved!, SECRET);
  });

  it('an unknown id, or one of another world, is 404 in the error dialect; GET is 405', async () => {
    const hook = await receiver();
    const mock = await bin();
    await closePull(mock, 'owner-world', `${hook.origin}/hook`);
    const [mine] = (await sandboxCall(mock, 'owner-world', 'GET', '/__sandbox/deliveries')).body
      .deliveries as DeliveryRecord[];
    const docs = `${originOf(mock)}/api/swagger`;
    for (const [token, id] of [
      ['owner-world', '00000000-0000-4000-8000-000000000000'],
      ['other-world', mine!.id],
    ] as const) {
      expect(await sandboxCall(mock, token, 'POST', `/__sandbox/deliveries/${id}/redeliver`)).toEqual({
        status: 404,
        body: { message: `no delivery ${id} in this credential's log`, url: docs },
      });
    }
    const wrong = await sandboxCall(mock, 'owner-world', 'GET', `/__sandbox/deliveries/${mine!.id}/redeliver`);
    expect(wrong.status).toBe(405);
    const anonymous = await fetch(`${originOf(mock)}/__sandbox/deliveries/${mine!.id}/redeliver`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /__sandbox/deliveries?wait=', () => {
  it('answers once a matching delivery has settled, with the matching settled ones', async () => {
    const hook = await receiver();
    const mock = await bin();
    const gitea = clientOf(mock, 'waiting');
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: { config: { url: `${hook.origin}/hook` }, events: ['issues', 'pull_request'] },
      }),
    );
    // The wait starts before the write that causes the delivery.
    const waiting = sandboxCall(
      mock,
      'waiting',
      'GET',
      '/__sandbox/deliveries?event=issue_assign&action=unassigned&wait=30',
    );
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: { state: 'closed' },
      }),
    );
    await unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { ...rocket, index: 42 } },
        body: { assignees: ['bob'] },
      }),
    );
    const answer = await waiting;
    expect(answer.status).toBe(200);
    const deliveries = answer.body.deliveries as DeliveryRecord[];
    expect(deliveries.map((entry) => [entry.type, entry.action, entry.state])).toEqual([
      ['issue_assign', 'unassigned', 'delivered'],
    ]);
    // Filters without a wait read the log as it is.
    const closed = await sandboxCall(mock, 'waiting', 'GET', '/__sandbox/deliveries?event=pull_request&action=closed');
    expect(closed.body.deliveries.map((entry: DeliveryRecord) => entry.action)).toEqual(['closed']);
  });

  it('a failed delivery settles a wait too; nothing matching within the wait is 408; a wait past 60 s is 422', async () => {
    const mock = await bin();
    await closePull(mock, 'failing', 'http://127.0.0.1:9/hook');
    const failed = await sandboxCall(mock, 'failing', 'GET', '/__sandbox/deliveries?event=pull_request&wait=20');
    expect(failed.body.deliveries.map((entry: DeliveryRecord) => entry.state)).toEqual(['failed']);

    const docs = `${originOf(mock)}/api/swagger`;
    expect(await sandboxCall(mock, 'failing', 'GET', '/__sandbox/deliveries?event=push&wait=1')).toEqual({
      status: 408,
      body: { message: 'no push delivery settled within 1 s', url: docs },
    });
    expect(await sandboxCall(mock, 'failing', 'GET', '/__sandbox/deliveries?wait=61')).toEqual({
      status: 422,
      body: { message: 'wait must be a number of seconds from 0 to 60: "61"', url: docs },
    });
  });
});

describe('repoEditHook keeps only the config Gitea keeps', () => {
  it('never stores nor answers config.secret or config.http_method', async () => {
    const mock = await bin();
    const gitea = clientOf(mock, 'config');
    const edited = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: {
          config: {
            url: 'https://ci.example.net/other',
            content_type: 'form',
            secret: 'do-not-echo',
            http_method: 'GET',
            channel: '#builds',
          },
        },
      }),
    );
    expect(edited.config).toEqual({ url: 'https://ci.example.net/other', content_type: 'form' });
    const again = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', { params: { path: { ...rocket, id: 4001 } }, body: {} }),
    );
    expect(again.config).toEqual({ url: 'https://ci.example.net/other', content_type: 'form' });
  });
});
