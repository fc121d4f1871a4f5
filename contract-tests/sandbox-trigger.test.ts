// Events fired on demand, against the built bin: `POST /__sandbox/trigger` and `gitea-mock
// trigger` build a delivery of any of the document's 26 event types, with each of its actions,
// from the world's records, send it signed to the hooks that take it (Gitea's HasEvent and branch
// filter) and to the system hooks, and log it; each payload is valid against the document's
// schema for its event. A push is made up consistently; what cannot be fired is refused in the
// service's error dialect.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGiteaClient, unwrap, type EditHookOption } from '../src/index.js';
import {
  createSchemaValidator,
  type DeliveryRecord,
  listWebhooks,
  loadDocument,
} from '../test/support/mock-internals.js';
import { call } from './support/call.js';
import { expectSignedBy, startHookReceiver, type HookReceiver } from './support/hook-receiver.js';
import { launch, type Launched } from './support/launch.js';

const cli = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const schemas = createSchemaValidator(doc);
const SECRET = 'trigger-secret';
const rocket = { owner: 'acme', repo: 'rocket' } as const;

/** Each event type of the document with its actions (none for push, create, delete, fork, status). */
const EVENTS = listWebhooks(doc).map((webhook) => {
  const schema = (webhook.operation as any).requestBody.content['application/json'].schema;
  const narrowed = schema.allOf?.[1]?.properties?.action?.enum as string[] | undefined;
  const ref = (schema.$ref ?? schema.allOf?.[0]?.$ref) as string;
  const own = (doc as any).components.schemas[ref.split('/').at(-1)!].properties?.action?.enum as string[] | undefined;
  return { type: webhook.path, actions: narrowed ?? own };
});

/** `X-Gitea-Event` of each type, as modules/webhook/type.go `Event` groups them. */
const GROUP: Record<string, string> = {
  issue_assign: 'issues',
  issue_label: 'issues',
  issue_milestone: 'issues',
  pull_request_assign: 'pull_request',
  pull_request_label: 'pull_request',
  pull_request_milestone: 'pull_request',
  pull_request_sync: 'pull_request',
  pull_request_review_request: 'pull_request',
  pull_request_comment: 'issue_comment',
  pull_request_review_approved: 'pull_request_approved',
  pull_request_review_rejected: 'pull_request_rejected',
  pull_request_review_comment: 'pull_request_comment',
};

let mock: Launched;
let system: HookReceiver;
let repoHook: HookReceiver;

beforeAll(async () => {
  [system, repoHook] = await Promise.all([startHookReceiver(), startHookReceiver()]);
  mock = await launch(process.execPath, [cli, 'sandbox', '--port', '0', '--webhook', `${system.origin}/system`], {
    ...process.env,
    GITEA_WEBHOOK_SECRET: SECRET,
  });
});

afterAll(async () => {
  await mock?.stop();
  await Promise.all([system?.close(), repoHook?.close()]);
});

const origin = (): string => new URL(mock.baseUrl).origin;

async function trigger(token: string | undefined, body: unknown): Promise<{ status: number; body: any }> {
  const answer = await call(`${origin()}/__sandbox/trigger`, 'POST', { token: token || undefined, json: body });
  return { status: answer.status, body: answer.json };
}

describe('POST /__sandbox/trigger', () => {
  it('the document describes 26 event types, each of which the trigger fires', () => {
    expect(EVENTS).toHaveLength(26);
  });

  it('fires every event type with each of its actions: signed, to the system hook, valid against its schema', async () => {
    const fired: { type: string; action: string | undefined; id: string }[] = [];
    for (const { type, actions } of EVENTS) {
      for (const action of actions ?? [undefined]) {
        const answer = await trigger('every-event', { event: type, repository: 'acme/rocket', action });
        expect([type, action, answer.status]).toEqual([type, action, 201]);
        const deliveries = answer.body.deliveries as DeliveryRecord[];
        const toSystem = deliveries.filter((entry) => entry.hook.target === 'system');
        expect(toSystem.map((entry) => [entry.type, entry.action, entry.state])).toEqual([
          [type, action ?? '', 'pending'],
        ]);
        fired.push({ type, action, id: toSystem[0]!.id });
      }
    }
    const received = await system.waitFor(fired.map((each) => each.id));
    for (const [index, delivery] of received.entries()) {
      const { type, action } = fired[index]!;
      await expectSignedBy(delivery, SECRET);
      expect([type, delivery.headers['x-gitea-event-type'], delivery.headers['x-gitea-event']]).toEqual([
        type,
        type,
        GROUP[type] ?? type,
      ]);
      const payload = JSON.parse(delivery.body);
      expect([
        type,
        action,
        schemas.check(`/webhooks/${type}/post/requestBody/content/application~1json/schema`, payload),
      ]).toEqual([type, action, []]);
      if (action !== undefined) expect(payload.action).toBe(action);
      // A package's payload names no repository (Gitea's notifyPackage), its owner as the organization.
      if (type === 'package') expect([payload.repository, payload.organization.id]).toEqual([null, 2001]);
      else expect([type, payload.forkee?.full_name ?? payload.repository.full_name]).toEqual([type, 'acme/rocket']);
      expect([type, payload.sender.login]).toEqual([type, 'alice']);
      // Indented as Gitea's JSONPayload writes each: by one space for repository and wiki, by two for the rest.
      const indent = type === 'repository' || type === 'wiki' ? 1 : 2;
      expect([type, delivery.body]).toEqual([type, JSON.stringify(payload, null, indent)]);
    }
    // Issue events carry the world's issue 42, pull request events its pull request 43.
    const body = (type: string) => JSON.parse(received[fired.findIndex((each) => each.type === type)]!.body);
    expect(body('issue_comment').issue.number).toBe(42);
    expect(body('issues').issue.title).toBe('Launch countdown skips 3');
    expect(body('pull_request_review_approved').pull_request.number).toBe(43);
    expect(body('pull_request_sync').pull_request.title).toBe('Fix countdown off-by-one');
  }, 120_000);

  it('a push: commits made up consistently on the default branch, each push after the one before', async () => {
    const first = await trigger('pushes', { event: 'push', repository: 'acme/rocket' });
    const second = await trigger('pushes', { event: 'push', repository: 'acme/rocket' });
    const ids = [first, second].map(
      (answer) => (answer.body.deliveries as DeliveryRecord[]).find((entry) => entry.hook.target === 'system')!.id,
    );
    const [one, two] = (await system.waitFor(ids)).map((delivery) => JSON.parse(delivery.body));
    for (const push of [one, two]) {
      expect(push.ref).toBe('refs/heads/main');
      for (const sha of [push.before, push.after]) expect(sha).toMatch(/^[0-9a-f]{40}$/);
      expect(push.commits.map((commit: { id: string }) => commit.id)).toEqual([push.after]);
      expect(push.head_commit.id).toBe(push.after);
      expect(push.compare_url).toBe(`${push.repository.html_url}/compare/${push.before}...${push.after}`);
      expect(push.total_commits).toBe(1);
      expect(push.pusher.login).toBe('alice');
    }
    expect(two.before).toBe(one.after);
    expect(two.after).not.toBe(one.after);
    // Another world pushes from the same start: derived, not random.
    const other = await trigger('pushes-elsewhere', { event: 'push', repository: 'acme/rocket' });
    const [again] = await system.waitFor([
      (other.body.deliveries as DeliveryRecord[]).find((entry) => entry.hook.target === 'system')!.id,
    ]);
    expect([JSON.parse(again!.body).before, JSON.parse(again!.body).after]).toEqual([one.before, one.after]);
  });

  it("goes to the world's hooks that take the event, as Gitea's HasEvent and branch filter say", async () => {
    const gitea = createGiteaClient({ baseUrl: mock.baseUrl, auth: { token: 'listening' }, retry: 0 });
    const point = (events: NonNullable<EditHookOption['events']>, branch_filter = '') =>
      unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: { config: { url: `${repoHook.origin}/hook` }, events, branch_filter },
        }),
      );
    const targets = async (event: string, action?: string) =>
      ((await trigger('listening', { event, repository: 'acme/rocket', action })).body.deliveries as DeliveryRecord[])
        .filter((entry) => entry.hook.target === 'repository')
        .map((entry) => entry.hook.id);
    await point(['issues', 'pull_request']);
    expect(await targets('issue_label')).toEqual([4001]);
    expect(await targets('pull_request_review_approved')).toEqual([4001]);
    expect(await targets('issue_comment')).toEqual([4001]);
    expect(await targets('release')).toEqual([]);
    await point(['issues_only', 'push'], 'release/*');
    expect(await targets('issue_label')).toEqual([]);
    expect(await targets('issues', 'opened')).toEqual([4001]);
    // The default branch is main: the filter keeps the push away, and lets it through when it matches.
    expect(await targets('push')).toEqual([]);
    await point(['push'], '{main,release/*}');
    const [id] = (
      (await trigger('listening', { event: 'push', repository: 'acme/rocket' })).body.deliveries as DeliveryRecord[]
    )
      .filter((entry) => entry.hook.target === 'repository')
      .map((entry) => entry.id);
    const [got] = await repoHook.waitFor([id!]);
    expect(got!.headers['x-gitea-hook-installation-target-type']).toBe('repository');
    const log = await (
      await fetch(`${origin()}/__sandbox/deliveries?event=push&wait=20`, {
        headers: { Authorization: 'token listening' },
      })
    ).json();
    expect((log as { deliveries: DeliveryRecord[] }).deliveries.map((entry) => entry.id)).toContain(id);
  });

  it('refuses what it cannot fire, in the error dialect', async () => {
    const docs = `${origin()}/api/swagger`;
    const refused = async (token: string | undefined, body: unknown) => await trigger(token, body);
    expect(await refused('refusals', { event: 'pushed', repository: 'acme/rocket' })).toEqual({
      status: 422,
      body: {
        message: expect.stringMatching(/^"pushed" is not an event type Gitea sends; the document describes create, /),
        url: docs,
      },
    });
    expect(await refused('refusals', { event: 'issues', action: 'exploded', repository: 'acme/rocket' })).toEqual({
      status: 422,
      body: {
        message: '"exploded" is not an action of issues; it has closed, deleted, edited, opened, reopened',
        url: docs,
      },
    });
    expect(await refused('refusals', { event: 'push', action: 'opened', repository: 'acme/rocket' })).toEqual({
      status: 422,
      body: { message: 'push has no action; send none', url: docs },
    });
    expect(await refused('refusals', { event: 'push', repository: 'acme/nothing' })).toEqual({
      status: 404,
      body: { message: "no repository acme/nothing in this credential's sandbox world", url: docs },
    });
    expect(await refused('refusals', ['push'])).toEqual({
      status: 422,
      body: {
        message: 'the body must be a JSON object: {"event": "push", "repository": "acme/rocket", "action"?: "…"}',
        url: docs,
      },
    });
    expect((await refused(undefined, { event: 'push', repository: 'acme/rocket' })).status).toBe(401);
  });
});

/** `gitea-mock trigger …` with these arguments and environment: its exit code and output. */
function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'trigger', ...args], {
      env: { ...process.env, GITEA_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gitea-mock trigger did not end within 30 s:\n${stdout}${stderr}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('gitea-mock trigger', () => {
  it('fires the event in the world of GITEA_TOKEN and prints the deliveries it queued', async () => {
    const done = await run(['release', '--action', 'published', '--repo', 'acme/rocket', '--url', origin()], {
      GITEA_TOKEN: 'from-the-command-line',
    });
    expect([done.code, done.stderr]).toEqual([0, '']);
    const line = done.stdout.split('\n').find((each) => each.includes('(system)')) ?? '';
    const [, id, url] = /^([0-9a-f-]{36}) release published to hook 1 \(system\) (\S+): pending$/.exec(line) ?? [];
    expect(url, done.stdout).toBe(`${system.origin}/system`);
    expect(id, done.stdout).toBeDefined();
    const [got] = await system.waitFor([id!]);
    expect(JSON.parse(got!.body).action).toBe('published');
  });

  it('exits 1 when the sandbox refuses, 2 for a usage error', async () => {
    const refused = await run(['pushed', '--repo', 'acme/rocket', '--url', origin()], { GITEA_TOKEN: 'cli' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^gitea-mock trigger: 422 "pushed" is not an event type Gitea sends/);
    const missing = await run(['push', '--url', origin()], { GITEA_TOKEN: 'cli' });
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([
      2,
      'gitea-mock trigger: --repo owner/name is required',
    ]);
    const noToken = await run(['push', '--repo', 'acme/rocket', '--url', origin()], {});
    expect([noToken.code, noToken.stderr.split('\n')[0]]).toEqual([
      2,
      'gitea-mock trigger: set GITEA_TOKEN to the token of the sandbox world to fire the event in',
    ]);
  });
});
