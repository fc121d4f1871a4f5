// The sandbox's webhook deliveries, as Gitea sends them: for each operation and change that
// fires, exactly the deliveries Gitea sends (count, event, type, action, target type), in its
// order, each received on loopback, signed as Gitea signs (checked with node:crypto and with the
// client's verifyWebhookSignature) and valid against openapi.yaml's webhooks; nothing for inactive
// hooks, events a hook does not take, other worlds and the operations that fire nothing; and the
// failures (a receiver refusing, hanging, answering 500, a host not allowed) logged while the API
// answers at once. Then the acceptance case with the built bin, as users run it.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createGiteaClient,
  unwrap,
  type EditHookOption,
  type EditPullRequestOption,
  type GiteaClient,
} from '../src/index.js';
import {
  createSchemaValidator,
  type DeliveryRecord,
  listOperations,
  loadDocument,
  keyOf,
  loadOperations,
  seedWorld,
  type Backing,
  type SandboxOptions,
} from '../test/support/mock-internals.js';
import { apiErrorOf } from '../test/support/api-error.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import {
  expectSignedBy,
  payloadText,
  startHookReceiver,
  type HookReceiver,
  type Received,
} from './support/hook-receiver.js';
import { call } from './support/call.js';
import { exampleRequest } from './support/http.js';
import { launch, type Launched } from './support/launch.js';
import { builtSandboxes, editPullOn } from './support/sandbox-bin.js';

const SECRET = 'sandbox-hook-secret';
const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
const schemas = createSchemaValidator(doc);
const rocket = { owner: 'acme', repo: 'rocket' } as const;

let server: MockServer;
let hooks: HookReceiver;
let system: HookReceiver;
const warnings: string[] = [];

beforeAll(async () => {
  [hooks, system] = await Promise.all([startHookReceiver(), startHookReceiver()]);
  server = await startMockServer({
    port: 0,
    sandbox: { webhooks: { secret: SECRET, systemHooks: [`${system.origin}/system`], timeoutMs: 1500 } },
    onWarning: (line) => warnings.push(line),
  });
});

afterAll(async () => {
  await server?.close();
  await Promise.all([hooks?.close(), system?.close()]);
  expect(warnings).toEqual([]);
});

interface World {
  gitea: GiteaClient;
  token: string;
  /** The world's delivery log. */
  log(): Promise<DeliveryRecord[]>;
  /** The deliveries a write added to the log. */
  during(write: () => Promise<unknown>): Promise<DeliveryRecord[]>;
}

function world(on: MockServer = server, token = `hooks-${randomUUID()}`): World {
  const origin = new URL(on.baseUrl).origin;
  const log = async (): Promise<DeliveryRecord[]> => {
    const answer = await call(`${origin}/__sandbox/deliveries`, 'GET', { token });
    expect(answer.status).toBe(200);
    return (answer.json as { deliveries: DeliveryRecord[] }).deliveries;
  };
  return {
    gitea: createGiteaClient({ baseUrl: on.baseUrl, auth: { token }, retry: 0 }),
    token,
    log,
    async during(write) {
      const before = new Set((await log()).map((entry) => entry.id));
      await write();
      return (await log()).filter((entry) => !before.has(entry.id));
    },
  };
}

/** A script run as `node <file> <args>` whose first line matching `ready` gives its address. */
async function launchScript(
  file: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ url: string; waitFor(pattern: RegExp): Promise<void>; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [file, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const wake = new Set<() => void>();
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const each of wake) each();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const waitFor = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} in:\n${output}`)), 20_000);
      const check = (): void => {
        const match = pattern.exec(output);
        if (!match) return;
        clearTimeout(timer);
        wake.delete(check);
        resolve(match);
      };
      wake.add(check);
      check();
    });
  const url = (await waitFor(ready))[1]!;
  return {
    url,
    waitFor: async (pattern) => void (await waitFor(pattern)),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Points the world's hook 4001 at `url` with these events (repoEditHook). */
async function listen(
  { gitea }: World,
  events: NonNullable<EditHookOption['events']>,
  config: { url?: string; content_type?: 'json' | 'form' } = {},
  extra: { active?: boolean; authorization_header?: string } = {},
): Promise<void> {
  await unwrap(
    gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
      params: { path: { ...rocket, id: 4001 } },
      body: { config: { url: `${hooks.origin}/hook`, content_type: 'json', ...config }, events, ...extra },
    }),
  );
}

const editPull = (w: World, body: EditPullRequestOption) =>
  unwrap(w.gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', { params: { path: { ...rocket, index: 43 } }, body }));

const removeAssignees = (w: World, index: number, assignees: string[]) =>
  unwrap(
    w.gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
      params: { path: { ...rocket, index } },
      body: { assignees },
    }),
  );

/**
 * Each logged delivery as received (by the repository's hook or the system hook), checked: the
 * headers Gitea sends, the signatures, the payload against its webhook's schema. Resolves with the
 * payloads, in the log's order.
 */
async function received(entries: DeliveryRecord[]): Promise<Record<string, any>[]> {
  const byTarget = (target: string) => entries.filter((entry) => entry.hook.target === target).map((e) => e.id);
  const got = new Map<string, Received>();
  for (const [receiver, target] of [
    [hooks, 'repository'],
    [system, 'system'],
  ] as const) {
    const ids = byTarget(target);
    for (const [index, each] of (await receiver.waitFor(ids)).entries()) got.set(ids[index]!, each);
  }
  const payloads: Record<string, any>[] = [];
  for (const entry of entries) {
    const delivery = got.get(entry.id)!;
    expect(delivery.method).toBe('POST');
    expect(delivery.path).toBe(entry.hook.target === 'system' ? '/system' : '/hook');
    const h = delivery.headers;
    expect({
      delivery: [h['x-gitea-delivery'], h['x-gogs-delivery'], h['x-github-delivery']],
      event: [h['x-gitea-event'], h['x-gogs-event'], h['x-github-event']],
      type: [h['x-gitea-event-type'], h['x-gogs-event-type'], h['x-github-event-type']],
      target: [h['x-gitea-hook-installation-target-type'], h['x-github-hook-installation-target-type']],
    }).toEqual({
      delivery: [entry.id, entry.id, entry.id],
      event: [entry.event, entry.event, entry.event],
      type: [entry.type, entry.type, entry.type],
      target: [entry.hook.target, entry.hook.target],
    });
    await expectSignedBy(delivery, SECRET);
    const payload = JSON.parse(payloadText(delivery)) as Record<string, any>;
    expect(
      schemas.check(`/webhooks/${entry.type}/post/requestBody/content/application~1json/schema`, payload),
      `${entry.type} ${entry.action}`,
    ).toEqual([]);
    expect(payload.action).toBe(entry.action);
    expect(payload.sender).toMatchObject({ login: 'alice', email: '1001+alice@noreply.127.0.0.1', is_admin: false });
    payloads.push(payload);
  }
  return payloads;
}

/** The log entries of the repository's hook, as [type, action]. */
const kinds = (entries: DeliveryRecord[], target = 'repository') =>
  entries.filter((entry) => entry.hook.target === target).map((entry) => [entry.type, entry.action]);

describe('repoEditPullRequest', () => {
  it('sends one delivery per change, in the handler order, each with the pull request as it stood then', async () => {
    const w = world();
    await listen(w, ['pull_request']);
    const entries = await w.during(() =>
      editPull(w, {
        title: 'Fix the countdown',
        body: 'Every second counts.',
        assignees: ['carol'],
        milestone: 6000,
        labels: [],
        due_date: '2026-06-01T00:00:00Z',
        state: 'open',
        base: 'develop',
        allow_maintainer_edit: false,
      }),
    );
    const expected = [
      ['pull_request', 'edited'],
      ['pull_request', 'edited'],
      ['pull_request_assign', 'unassigned'],
      ['pull_request_assign', 'assigned'],
      ['pull_request_milestone', 'milestoned'],
      ['pull_request', 'edited'],
    ];
    // To the repository's hook and to the system hook, each in the same order.
    expect(kinds(entries)).toEqual(expected);
    expect(kinds(entries, 'system')).toEqual(expected);
    const payloads = await received(entries.filter((entry) => entry.hook.target === 'repository'));
    const pulls = payloads.map((payload) => payload.pull_request);
    expect(payloads.map((payload) => payload.changes)).toEqual([
      { title: { from: 'Fix countdown off-by-one' }, added_labels: null, removed_labels: null },
      { body: { from: 'The countdown skipped 3. This keeps every second.' }, added_labels: null, removed_labels: null },
      undefined,
      undefined,
      undefined,
      // Gitea fills `from` with the new base branch.
      { ref: { from: 'develop' }, added_labels: null, removed_labels: null },
    ]);
    expect(pulls.map((pull) => [pull.title, pull.body.slice(0, 5)])).toEqual([
      ['Fix the countdown', 'The c'],
      ...Array(5).fill(['Fix the countdown', 'Every']),
    ]);
    expect(pulls.map((pull) => pull.assignees.map((user: { login: string }) => user.login))).toEqual([
      ['bob'],
      ['bob'],
      [],
      ['carol'],
      ['carol'],
      ['carol'],
    ]);
    expect(pulls.map((pull) => [pull.milestone.id, pull.base.ref])).toEqual([
      [6001, 'main'],
      [6001, 'main'],
      [6001, 'main'],
      [6001, 'main'],
      [6000, 'main'],
      [6000, 'develop'],
    ]);
    for (const payload of payloads) {
      expect(payload).toMatchObject({ number: 43, commit_id: '', requested_reviewer: null, review: null });
      expect(payload.repository.full_name).toBe('acme/rocket');
    }
  });

  it('sends nothing for labels, the deadline, allow_maintainer_edit, or what is already so; a body even unchanged', async () => {
    const w = world();
    await listen(w, ['pull_request']);
    const quiet = await w.during(() =>
      editPull(w, {
        title: 'Fix countdown off-by-one',
        labels: [5002],
        due_date: '2026-07-01T00:00:00Z',
        allow_maintainer_edit: false,
        assignees: ['bob'],
        milestone: 6001,
        state: 'open',
        base: 'main',
      }),
    );
    expect(quiet).toEqual([]);
    const body = await w.during(() => editPull(w, { body: 'The countdown skipped 3. This keeps every second.' }));
    expect(kinds(body)).toEqual([['pull_request', 'edited']]);
    // Closed, then open again.
    await editPull(w, { state: 'closed' });
    const reopened = await w.during(() => editPull(w, { state: 'open' }));
    expect(kinds(reopened)).toEqual([['pull_request', 'reopened']]);
    expect(
      (await received(reopened.filter((entry) => entry.hook.target === 'repository')))[0]!.pull_request,
    ).toMatchObject({ state: 'open', closed_at: null });
  });

  it('keeps what it saved before a refusal, and sends its deliveries, as Gitea does without a transaction', async () => {
    const w = world();
    await listen(w, ['pull_request']);
    const refused = async (body: EditPullRequestOption, status: number, message: string) => {
      let answer = { status: 0, body: undefined as unknown };
      const entries = await w.during(async () => {
        answer = await apiErrorOf(editPull(w, body));
      });
      expect([answer.status, (answer.body as { message: string }).message]).toEqual([status, message]);
      return kinds(entries);
    };
    // An unknown assignee: the title before it is saved and sent, the milestone after it is not.
    expect(
      await refused(
        { title: 'Keep every second', assignees: ['dave'], milestone: 6000 },
        422,
        'Assignee does not exist: [name: user does not exist [uid: 0, name: dave]]',
      ),
    ).toEqual([['pull_request', 'edited']]);
    // An unknown milestone: the body and the assignees before it are saved and sent.
    expect(await refused({ body: 'Every second.', assignees: ['carol'], milestone: 6999 }, 500, '')).toEqual([
      ['pull_request', 'edited'],
      ['pull_request_assign', 'unassigned'],
      ['pull_request_assign', 'assigned'],
    ]);
    // A new base on a pull request this request closed: closed it stays.
    expect(
      await refused(
        { state: 'closed', base: 'develop' },
        422,
        'Pull Request [id: 7002, repo_id: 3001, index: 43] is already closed',
      ),
    ).toEqual([['pull_request', 'closed']]);
    const now = await editPull(w, { state: 'open' });
    expect(now).toMatchObject({ title: 'Keep every second', body: 'Every second.', state: 'open' });
    expect([now.milestone?.id, now.assignees?.map((user) => user.login), now.base?.ref]).toEqual([
      6001,
      ['carol'],
      'main',
    ]);
    // The base checks: a branch the repository lacks, and the head's own branch.
    expect(await refused({ base: 'release/9.9' }, 404, "new base 'release/9.9' not exist")).toEqual([]);
    expect(await refused({ title: 'Head', base: 'fix/countdown' }, 500, '')).toEqual([['pull_request', 'edited']]);
    // allow_maintainer_edit from someone other than the poster, after the rest is saved.
    const bob = createGiteaClient({ baseUrl: server.baseUrl, auth: { username: 'bob', password: 'x' }, retry: 0 });
    const notPoster = await apiErrorOf(
      unwrap(
        bob.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { title: 'By bob', allow_maintainer_edit: false },
        }),
      ),
    );
    expect([notPoster.status, (notPoster.body as { message: string }).message]).toEqual([
      403,
      'SetAllowEdits: user not allowed to do this action',
    ]);
  });

  it('ignores a new base on a merged pull request, and refuses one another open pull request from the same head has', async () => {
    const { seed } = seedWorld(await loadOperations(), doc);
    const seeded = (change: (world: typeof seed) => void) => {
      const copy = structuredClone(seed);
      change(copy);
      return { world: copy, bytes: JSON.stringify(copy).length };
    };
    const pullOf = (world: typeof seed) => world.pulls[0]!.pull;
    const ZERO = '2026-05-01T10:00:00Z';
    const merged = seeded((world) =>
      Object.assign(pullOf(world), { merged: true, state: 'closed', closed_at: ZERO, merged_at: ZERO }),
    );
    const twin = seeded((world) => {
      const other = { ...structuredClone(pullOf(world)), id: 7003, number: 44 };
      other.base = { ...other.base!, ref: 'develop', label: 'develop' };
      world.pulls.push({ repo: 3001, pull: other });
    });
    const worlds = new Map([
      [keyOf('token merged-world-token'), merged],
      [keyOf('token twin-world-token'), twin],
    ]);
    const store: Backing = { worlds, save: async () => {}, drop: async () => {}, close: async () => {} };
    // A test's backing, which startMockServer takes as the sandbox's own options do.
    const sandbox: SandboxOptions = { store, webhooks: { secret: SECRET } };
    const own = await startMockServer({ port: 0, sandbox });
    try {
      const onMerged = world(own, 'merged-world-token');
      await listen(onMerged, ['pull_request']);
      const entries = await onMerged.during(async () => {
        const state = await apiErrorOf(editPull(onMerged, { title: 'After the merge', state: 'open' }));
        expect([state.status, (state.body as { message: string }).message]).toEqual([
          412,
          'cannot change state of this pull request, it was already merged',
        ]);
        expect((await editPull(onMerged, { base: 'develop' })).base?.ref).toBe('main');
      });
      expect(kinds(entries)).toEqual([['pull_request', 'edited']]);
      const onTwin = world(own, 'twin-world-token');
      const taken = await apiErrorOf(editPull(onTwin, { base: 'develop' }));
      expect([taken.status, (taken.body as { message: string }).message]).toEqual([
        409,
        'pull request already exists for these targets [id: 7003, issue_id: 44, head_repo_id: 3001, base_repo_id: 3001, head_branch: fix/countdown, base_branch: develop]',
      ]);
    } finally {
      await own.close();
    }
  });

  it('reaches a hook only through the events it takes', async () => {
    const w = world();
    // pull_request_only: the base event without its sub-events.
    await listen(w, ['pull_request_only']);
    expect(kinds(await w.during(() => editPull(w, { assignees: ['carol'], state: 'closed' })))).toEqual([
      ['pull_request', 'closed'],
    ]);
    await listen(w, ['pull_request_assign', 'push']);
    expect(kinds(await w.during(() => editPull(w, { assignees: [], state: 'open' })))).toEqual([
      ['pull_request_assign', 'unassigned'],
    ]);
    // Inactive: the system hook still gets the event, the repository's hook nothing.
    await listen(w, ['pull_request'], {}, { active: false });
    const inactive = await w.during(() => editPull(w, { state: 'closed' }));
    expect([kinds(inactive), kinds(inactive, 'system')]).toEqual([[], [['pull_request', 'closed']]]);
    // The seed's hook takes push and release only.
    const seedOnly = world();
    expect(kinds(await seedOnly.during(() => editPull(seedOnly, { state: 'closed' })))).toEqual([]);
  });
});

describe('issueRemoveAssignees', () => {
  it('sends issue_assign unassigned per assigned user removed, each with the issue after all removals', async () => {
    const w = world();
    await listen(w, ['issues']);
    const both = await w.during(() => removeAssignees(w, 42, ['bob', 'carol', 'alice']));
    expect(kinds(both)).toEqual([
      ['issue_assign', 'unassigned'],
      ['issue_assign', 'unassigned'],
    ]);
    expect(both.map((entry) => entry.event)).toEqual(['issues', 'issues', 'issues', 'issues']);
    for (const payload of await received(both)) {
      expect(payload).toMatchObject({
        number: 42,
        commit_id: '',
        issue: { number: 42, assignees: null, assignee: null },
      });
      expect(payload.changes).toBeUndefined();
    }
    expect(await w.during(() => removeAssignees(w, 42, ['bob']))).toEqual([]);
  });

  it('sends pull_request_assign unassigned on a pull request, and nothing to a hook that takes issues only', async () => {
    const w = world();
    await listen(w, ['issues', 'pull_request_assign']);
    const removed = await w.during(() => removeAssignees(w, 43, ['bob']));
    expect(kinds(removed)).toEqual([['pull_request_assign', 'unassigned']]);
    const [payload] = await received(removed.filter((entry) => entry.hook.target === 'repository'));
    expect(payload!.pull_request).toMatchObject({ number: 43, assignees: [], assignee: null });
    const other = world();
    await listen(other, ['issues']);
    expect(kinds(await other.during(() => removeAssignees(other, 43, ['bob'])))).toEqual([]);
  });
});

describe('repoMigrate', () => {
  it("sends repository created to the owner's and system hooks only: the new repository has none", async () => {
    const w = world();
    await listen(w, ['repository', 'issues', 'pull_request']);
    const entries = await w.during(() =>
      unwrap(
        w.gitea.POST('/repos/migrate', {
          body: { clone_addr: 'https://git.example.net/up/probe.git', repo_name: 'probe' },
        }),
      ),
    );
    expect([kinds(entries), kinds(entries, 'system')]).toEqual([[], [['repository', 'created']]]);
    const [payload] = await received(entries);
    expect(payload!.repository).toMatchObject({
      full_name: 'alice/probe',
      permissions: { admin: true, push: true, pull: true },
    });
    expect(payload!.organization).toMatchObject({ login: 'alice', email: '1001+alice@noreply.127.0.0.1' });
    // Indented by one space, as Gitea writes repository payloads.
    const delivery = system.received.find((each) => each.headers['x-gitea-delivery'] === entries[0]!.id)!;
    expect(delivery.body.startsWith('{\n "action": "created",\n "repository": {\n  "id"')).toBe(true);
  });
});

describe('what sends nothing', () => {
  it('the other seventeen operations, even with a system hook that takes every event', async () => {
    const w = world();
    await listen(w, ['issues', 'pull_request', 'repository', 'create', 'push', 'release', 'package']);
    const firing = new Set(['repoMigrate', 'issueRemoveAssignees', 'repoEditPullRequest']);
    // The rename last: the others use bob's name.
    const operations = listOperations(doc)
      .filter((op) => !firing.has(String(op.operation.operationId)))
      .sort(
        (a, b) =>
          Number(a.operation.operationId === 'adminRenameUser') - Number(b.operation.operationId === 'adminRenameUser'),
      );
    expect(operations).toHaveLength(17);
    const before = await w.log();
    for (const op of operations) {
      const request = await exampleRequest(doc, server.baseUrl, op);
      const answer = await call(request.url, request.method, {
        headers: { ...request.headers, authorization: `token ${w.token}` },
        body: request.body,
      });
      expect(answer.status, String(op.operation.operationId)).toBeLessThan(300);
    }
    expect(await w.log()).toEqual(before);
  });

  it("another world's writes", async () => {
    const listening = world();
    await listen(listening, ['pull_request', 'issues']);
    const other = world();
    const otherEntries = await other.during(() => editPull(other, { state: 'closed' }));
    expect([kinds(otherEntries), kinds(otherEntries, 'system')]).toEqual([[], [['pull_request', 'closed']]]);
    expect(await listening.log()).toEqual([]);
  });
});

describe('how a delivery is sent', () => {
  it('as a form whose payload field holds the signed JSON, with the hook authorization header, masked in the log', async () => {
    const w = world();
    await listen(w, ['pull_request'], { content_type: 'form' }, { authorization_header: 'Bearer hook-token-5150' });
    const entries = (await w.during(() => editPull(w, { state: 'closed' }))).filter(
      (e) => e.hook.target === 'repository',
    );
    expect(entries.map((entry) => entry.headers.Authorization)).toEqual(['******']);
    const [delivery] = await hooks.waitFor(entries.map((entry) => entry.id));
    expect(delivery!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(delivery!.headers.authorization).toBe('Bearer hook-token-5150');
    expect(delivery!.body.startsWith('payload=%7B%0A++%22action%22%3A+%22closed%22')).toBe(true);
    await received(entries);
  });

  it("writes a form's payload byte for byte as Go's url.Values.Encode", async () => {
    const w = world();
    await listen(w, ['pull_request'], { content_type: 'form' });
    let ascii = '';
    for (let code = 0x21; code < 0x7f; code++) ascii += String.fromCharCode(code);
    const title = `${ascii} with spaces, \u00e9\u00fc \u{1F600} \u2028 and ~*!'()`;
    const entries = (await w.during(() => editPull(w, { title }))).filter((e) => e.hook.target === 'repository');
    const [delivery] = await hooks.waitFor(entries.map((entry) => entry.id));
    const json = decodeURIComponent(delivery!.body.slice('payload='.length).replaceAll('+', ' '));
    expect(JSON.parse(json).pull_request.title).toBe(title);
    // Go's QueryEscape: [A-Za-z0-9-_.~] as they are, a space as +, every other byte as %XX in capitals.
    const goEscaped = [...Buffer.from(json, 'utf8')]
      .map((byte) => {
        const char = String.fromCharCode(byte);
        if (/[A-Za-z0-9\-_.~]/.test(char)) return char;
        return byte === 0x20 ? '+' : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      })
      .join('');
    expect(delivery!.body).toBe(`payload=${goEscaped}`);
    expect(entries[0]!.body).toBe(delivery!.body);
    await received(entries);
  });

  it('reports the log to its own credential only', async () => {
    const origin = new URL(server.baseUrl).origin;
    expect((await fetch(`${origin}/__sandbox/deliveries`)).status).toBe(401);
    const post = await fetch(`${origin}/__sandbox/deliveries`, {
      method: 'POST',
      headers: { Authorization: 'token x' },
    });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
  });

  it("keeps the newest of a world's deliveries, at most 100 and 1 MiB of bodies", async () => {
    const w = world();
    await listen(w, ['pull_request']);
    const toggle = (i: number) => editPull(w, { state: i % 2 === 0 ? 'closed' : 'open' });
    await toggle(0);
    const [first] = await w.log();
    // Each event goes to the repository's hook and to the system hook.
    for (let i = 1; i < 36; i++) await toggle(i);
    const log = await w.log();
    const bytes = log.reduce((sum, entry) => sum + entry.body.length, 0);
    expect(log.length).toBeLessThanOrEqual(100);
    expect(bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(bytes + log[0]!.body.length).toBeGreaterThan(1024 * 1024);
    expect(log.some((entry) => entry.id === first!.id)).toBe(false);
    expect(log.at(-1)!.hook.target).toBe('system');
  });
});

describe('failed deliveries', () => {
  /** A port nothing listens on: taken, then let go. */
  async function closedPort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    return port;
  }

  /** The delivery once it has settled; bounded below the test's timeout, so a stuck one says what it is. */
  async function settled(w: World, id: string, what: string): Promise<DeliveryRecord> {
    const deadline = Date.now() + 40_000;
    for (;;) {
      const entry = (await w.log()).find((each) => each.id === id);
      if (entry === undefined) throw new Error(`${what}: delivery ${id} is no longer in the log`);
      if (entry.state !== 'pending') return entry;
      if (Date.now() > deadline) throw new Error(`${what}: still pending after 40 s: ${JSON.stringify(entry)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('a receiver refusing, hanging past the timeout, answering 500, or on a host not allowed: logged, the sandbox still answering', async () => {
    const hanging = await startHookReceiver('hang');
    const failing = await startHookReceiver('fail');
    try {
      const cases: [string, string, (entry: DeliveryRecord) => void][] = [
        [`http://127.0.0.1:${await closedPort()}/hook`, 'refused', (e) => expect(e.error).toMatch(/ECONNREFUSED/)],
        [
          `${hanging.origin}/hook`,
          'hanging',
          (e) => expect(e.error).toBe('no answer within the delivery timeout of 1.5 s'),
        ],
        [`${failing.origin}/hook`, '500', (e) => expect([e.status, e.error]).toEqual([500, undefined])],
        [
          'http://10.1.2.3:8080/hook',
          'not allowed',
          (e) => expect(e.error).toMatch(/10\.1\.2\.3 is not an allowed host/),
        ],
        ['http://[fd00::7]/hook', 'not allowed', (e) => expect(e.error).toMatch(/fd00::7 is not an allowed host/)],
      ];
      for (const [url, what, check] of cases) {
        const w = world();
        await listen(w, ['pull_request'], { url });
        const [entry] = (await w.during(() => editPull(w, { state: 'closed' }))).filter(
          (each) => each.hook.target === 'repository',
        );
        const done = await settled(w, entry!.id, what);
        expect(done.state, what).toBe('failed');
        check(done);
      }
      expect(hanging.received).toHaveLength(1);
      // The sandbox is still up and answers.
      const read = await fetch(`${server.baseUrl}/repos/acme/rocket/keys/11001`, {
        headers: { Authorization: 'token x' },
      });
      expect(read.status).toBe(200);
    } finally {
      await Promise.all([hanging.close(), failing.close()]);
    }
  }, 60_000);

  it("follows a receiver's redirects as Go's client does: up to 10, each hop through the allow-list, the last answer judged", async () => {
    type Hop = { method: string; path: string; headers: Record<string, string | string[] | undefined>; body: string };
    const hops: Hop[] = [];
    /** Each path answers its redirect (`/<status>/<next path>`), `/end/<status>` its status. */
    const redirecting = createHttpServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        hops.push({ method: request.method!, path, headers: request.headers, body: Buffer.concat(chunks).toString() });
        const [, first = '', ...rest] = path.split('/');
        if (first === 'end') return response.writeHead(Number(rest[0])).end();
        if (first === 'loop') return response.writeHead(302, { Location: '/loop' }).end();
        response.writeHead(Number(first), { Location: decodeURIComponent(rest.join('/')) }).end('moved');
      });
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const { port } = redirecting.address() as { port: number };
    try {
      const deliver = async (path: string, extra: { authorization_header?: string } = {}) => {
        hops.length = 0;
        const w = world();
        await listen(w, ['pull_request'], { url: `http://127.0.0.1:${port}${path}` }, extra);
        const [entry] = (await w.during(() => editPull(w, { state: 'closed' }))).filter(
          (each) => each.hook.target === 'repository',
        );
        return settled(w, entry!.id, path);
      };
      // 307 repeats the POST with its body; 302 goes on as a GET without one; a relative Location resolves against the hop.
      const chain = `/307/${encodeURIComponent(`/302/${encodeURIComponent('/end/204')}`)}`;
      const followed = await deliver(chain, { authorization_header: 'Bearer hop-token' });
      expect([followed.state, followed.status]).toEqual(['delivered', 204]);
      expect(hops.map((hop) => [hop.method, hop.body === '' ? 'no body' : 'body'])).toEqual([
        ['POST', 'body'],
        ['POST', 'body'],
        ['GET', 'no body'],
      ]);
      expect(hops[1]!.body).toBe(hops[0]!.body);
      expect(hops[1]!.headers['x-gitea-signature']).toBe(hops[0]!.headers['x-gitea-signature']);
      expect(hops.map((hop) => [hop.headers.authorization, hop.headers.referer])).toEqual([
        ['Bearer hop-token', undefined],
        ['Bearer hop-token', `http://127.0.0.1:${port}${chain}`],
        ['Bearer hop-token', `http://127.0.0.1:${port}${decodeURIComponent(chain.slice(5))}`],
      ]);
      // Another host: the Authorization header stays behind, on that hop and every one after.
      const away = `/308/${encodeURIComponent(`http://localhost:${port}/307/${encodeURIComponent(`http://127.0.0.1:${port}/end/200`)}`)}`;
      expect((await deliver(away, { authorization_header: 'Bearer hop-token' })).state).toBe('delivered');
      expect(hops.map((hop) => hop.headers.authorization)).toEqual(['Bearer hop-token', undefined, undefined]);
      // The last answer is the result.
      const lost = await deliver(`/301/${encodeURIComponent('/end/404')}`);
      expect([lost.state, lost.status]).toEqual(['failed', 404]);
      // An eleventh redirect is not followed.
      const loop = await deliver('/loop');
      expect([loop.state, loop.error, hops.length]).toEqual([
        'failed',
        'the request failed: stopped after 10 redirects',
        11,
      ]);
      // A hop to a host the allow-list refuses is never dialled.
      const outside = await deliver(`/302/${encodeURIComponent('http://10.1.2.3:8080/hook')}`);
      expect([outside.state, outside.error, hops.length]).toEqual([
        'failed',
        'not sent on after 1 redirect, to http://10.1.2.3:8080: 10.1.2.3 is not an allowed host (allowed: loopback; --webhook-allowed-hosts names others)',
        1,
      ]);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
    }
  }, 60_000);

  it('an authorization header Go cannot send fails its delivery in startMockServer too, and the process goes on', async () => {
    const w = world();
    await listen(w, ['pull_request'], {}, { authorization_header: 'Bearer in-process\nX-Injected: 1' });
    const [entry] = (await w.during(() => editPull(w, { state: 'closed' }))).filter(
      (each) => each.hook.target === 'repository',
    );
    const done = await settled(w, entry!.id, 'in process');
    expect([done.state, done.error]).toEqual([
      'failed',
      'the request failed: invalid header field value for "Authorization" (a line break or control character, which Go\'s client refuses to send)',
    ]);
    expect(done.headers.Authorization).toBe('******');
  });

  it('an async onDelivery of startMockServer that rejects is told on the console, and ends nothing', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const rejecting = await startMockServer({
      port: 0,
      sandbox: {
        webhooks: {
          systemHooks: [`${system.origin}/system`],
          onDelivery: async () => {
            throw new Error('this test takes no delivery');
          },
        },
      },
    });
    try {
      const gitea = createGiteaClient({ baseUrl: rejecting.baseUrl, auth: { token: 'rejecting' }, retry: 0 });
      await editPullOn(gitea, { state: 'closed' });
      await expect.poll(() => errors.mock.calls.length, { timeout: 20_000 }).toBe(1);
      expect(errors.mock.calls[0]![0]).toMatch(
        /^gitea-mock: onDelivery failed for delivery [\w-]+ \(pull_request closed\):$/,
      );
      expect(errors.mock.calls[0]![1]).toEqual(new Error('this test takes no delivery'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      errors.mockRestore();
      await rejecting.close();
    }
  });

  it('a receiver that never answers holds up no answer of the API', async () => {
    const hanging = await startHookReceiver('hang');
    // A delivery that can only end when this sandbox stops: the write's answer cannot have waited for it.
    const patient = await startMockServer({ port: 0, sandbox: { webhooks: { timeoutMs: 600_000 } } });
    try {
      const gitea = createGiteaClient({ baseUrl: patient.baseUrl, auth: { token: 'patient' }, retry: 0 });
      await unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: { config: { url: `${hanging.origin}/hook` }, events: ['pull_request'] },
        }),
      );
      await unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { state: 'closed' },
        }),
      );
      const answer = await fetch(`${new URL(patient.baseUrl).origin}/__sandbox/deliveries`, {
        headers: { Authorization: 'token patient' },
      });
      const [entry] = ((await answer.json()) as { deliveries: DeliveryRecord[] }).deliveries;
      expect(entry!.state).toBe('pending');
      // Without --webhook-secret the signatures are empty, as Gitea sends them for a hook without a secret.
      const [delivery] = await hanging.waitFor([entry!.id]);
      expect([
        delivery!.headers['x-gitea-signature'],
        delivery!.headers['x-gogs-signature'],
        delivery!.headers['x-hub-signature-256'],
        delivery!.headers['x-hub-signature'],
      ]).toEqual(['', '', 'sha256=', 'sha1=']);
    } finally {
      await patient.close();
      await hanging.close();
    }
  });

  it('goes only where the allowed hosts say: with private alone, not to loopback', async () => {
    const strict = await startMockServer({ port: 0, sandbox: { webhooks: { allowedHosts: 'private, 10.9.0.0/16' } } });
    try {
      const gitea = createGiteaClient({ baseUrl: strict.baseUrl, auth: { token: 'strict' }, retry: 0 });
      await unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: { config: { url: `${hooks.origin}/hook` }, events: ['pull_request'] },
        }),
      );
      await unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { state: 'closed' },
        }),
      );
      const logOf = async () =>
        (
          (await call(`${new URL(strict.baseUrl).origin}/__sandbox/deliveries`, 'GET', { token: 'strict' })).json as {
            deliveries: DeliveryRecord[];
          }
        ).deliveries;
      let [entry] = await logOf();
      for (let tries = 0; entry!.state === 'pending'; tries++) {
        expect(tries).toBeLessThan(400);
        await new Promise((resolve) => setTimeout(resolve, 50));
        [entry] = await logOf();
      }
      expect([entry!.state, entry!.error]).toEqual([
        'failed',
        'not sent: 127.0.0.1 is not an allowed host (allowed: private, 10.9.0.0/16; --webhook-allowed-hosts names others)',
      ]);
    } finally {
      await strict.close();
    }
  });
});

describe('examples/webhook-receiver.mjs', () => {
  it("routes the sandbox's deliveries to its handlers, a triggered push among them, and refuses a forged one", async () => {
    const example = fileURLToPath(new URL('../examples/webhook-receiver.mjs', import.meta.url));
    const run = await launchScript(
      example,
      ['0'],
      { WEBHOOK_SECRET: SECRET },
      /receiving webhooks on (http:\S+\/hook)/,
    );
    try {
      const w = world();
      await listen(w, ['pull_request', 'push'], { url: run.url });
      await editPull(w, { state: 'closed' });
      await run.waitFor(/pull request #43 "Fix countdown off-by-one" closed by alice\n/);
      const triggered = await fetch(`${new URL(server.baseUrl).origin}/__sandbox/trigger`, {
        method: 'POST',
        headers: { Authorization: `token ${w.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ event: 'push', repository: 'acme/rocket' }),
      });
      expect(triggered.status).toBe(201);
      await run.waitFor(/pushed 1 commit\(s\) to refs\/heads\/main\n/);
      const forged = await fetch(run.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gitea-event-type': 'pull_request',
          'x-gitea-signature': '0'.repeat(64),
        },
        body: '{"action":"closed"}',
      });
      expect(forged.status).toBe(401);
      await run.waitFor(/refused bad-signature: the signature does not match/);
    } finally {
      await run.stop();
    }
  });
});

describe('the built bin, as the README runs it', () => {
  let bin: Launched | undefined;
  afterAll(async () => {
    await bin?.stop();
  });

  it('refuses webhook options it cannot use, before anything listens', async () => {
    const cli = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
    const refusal = (args: string[]) =>
      new Promise<[number | null, string]>((resolve) => {
        const child = spawn(process.execPath, [cli, 'sandbox', '--port', '0', ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('exit', (code) => resolve([code, stderr.split('\n')[0]!]));
      });
    expect(await refusal(['--webhook', 'ftp://bots.example.net'])).toEqual([
      2,
      'gitea-mock: --webhook ftp://bots.example.net: give an http or https URL, such as http://127.0.0.1:9000/hook',
    ]);
    expect(await refusal(['--webhook-allowed-hosts', 'loopback,10.0.0.0/40'])).toEqual([
      2,
      'gitea-mock: --webhook-allowed-hosts: "10.0.0.0/40" is no CIDR range, such as 10.0.0.0/8 or fd00::/8',
    ]);
    expect(await refusal(['--webhook-secret', 's'])).toEqual([
      2,
      'gitea-mock: --webhook-secret is not an option: secrets come from the environment only, never the command line (where process lists and CI logs show them): set GITEA_WEBHOOK_SECRET to the secret the deliveries are signed with',
    ]);
  });

  it('GITEA_WEBHOOK_SECRET=s gitea-mock sandbox: closing pull request 43 and unassigning bob from issue 42 deliver, signed and valid', async () => {
    const cli = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
    bin = await launch(process.execPath, [cli, 'sandbox', '--port', '0'], {
      ...process.env,
      GITEA_WEBHOOK_SECRET: 's',
    });
    const receiver = await startHookReceiver();
    try {
      const gitea = createGiteaClient({ baseUrl: bin.baseUrl, auth: { token: 'dev' }, retry: 0 });
      await unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: {
            config: { url: `${receiver.origin}/hook`, content_type: 'json' },
            events: ['issues', 'pull_request'],
          },
        }),
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
      const log = (await (
        await fetch(`${new URL(bin.baseUrl).origin}/__sandbox/deliveries`, { headers: { Authorization: 'token dev' } })
      ).json()) as { deliveries: DeliveryRecord[] };
      const ids = log.deliveries.map((entry) => entry.id);
      expect(log.deliveries.map((entry) => [entry.event, entry.type, entry.action])).toEqual([
        ['pull_request', 'pull_request', 'closed'],
        ['issues', 'issue_assign', 'unassigned'],
      ]);
      const got = await receiver.waitFor(ids);
      for (const [index, delivery] of got.entries()) {
        await expectSignedBy(delivery, 's');
        const type = log.deliveries[index]!.type;
        expect(
          schemas.check(
            `/webhooks/${type}/post/requestBody/content/application~1json/schema`,
            JSON.parse(delivery.body),
          ),
        ).toEqual([]);
        expect(delivery.headers['x-gitea-hook-installation-target-type']).toBe('repository');
      }
      expect(JSON.parse(got[1]!.body).issue.assignees.map((user: { login: string }) => user.login)).toEqual(['carol']);
      // A line per delivery, as per request; each is printed when its answer has been read, which
      // may come after the receiver has seen both, in either order.
      const lines = [
        /webhook pull_request closed to http:\/\/127\.0\.0\.1:\d+\/hook: 200 \d+ms/,
        /webhook issue_assign unassigned to http:\/\/127\.0\.0\.1:\d+\/hook: 200 \d+ms/,
      ];
      const printed = bin.output;
      for (let tries = 0; !lines.every((line) => line.test(printed())); tries++) {
        expect(tries, printed()).toBeLessThan(400);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('what a client or a receiver can do to the deliveries, against the built bin', () => {
  const { started, bin, receiver, settledLog, clientOf } = builtSandboxes();
  it('an authorization header no HTTP header can carry is stored, as Gitea stores it, and its delivery fails as Go fails it; the sandbox stays up', async () => {
    const mock = await bin([]);
    const hook = await receiver();
    const gitea = clientOf(mock, 'poison');
    const edit = (authorization_header: string) =>
      unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
          params: { path: { ...rocket, id: 4001 } },
          body: { config: { url: `${hook.origin}/hook` }, events: ['pull_request'], authorization_header },
        }),
      );
    const toggle = (state: 'open' | 'closed') =>
      unwrap(
        gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
          params: { path: { ...rocket, index: 43 } },
          body: { state },
        }),
      );
    // Go's client sends a header's UTF-8 bytes as they are.
    expect((await edit('Bearer \u{1F600}')).authorization_header).toBe('Bearer \u{1F600}');
    await toggle('closed');
    const [sent] = await settledLog(mock, 'poison');
    expect(sent!.state).toBe('delivered');
    const [got] = await hook.waitFor([sent!.id]);
    expect(Buffer.from(got!.headers.authorization!, 'latin1').toString('utf8')).toBe('Bearer \u{1F600}');
    // A line break is no header value: Go's transport refuses the request, and the delivery fails.
    await edit('Bearer secret-part\r\nX-Injected: 1');
    await toggle('open');
    const failed = (await settledLog(mock, 'poison')).at(-1)!;
    expect(failed.state).toBe('failed');
    expect(failed.error).toMatch(/invalid header field value for "Authorization"/);
    expect(JSON.stringify(failed)).not.toContain('secret-part');
    expect(hook.received).toHaveLength(1);
    // Still up, and answering.
    await toggle('closed');
    expect((await settledLog(mock, 'poison')).at(-1)!.state).toBe('failed');
    expect(mock.child.exitCode).toBe(null);
    expect(mock.output()).not.toContain('secret-part');
  });

  it('a hook kept with such a header in --state fails its deliveries after a restart too, and the sandbox stays up', async () => {
    const state = await mkdtemp(join(tmpdir(), 'gitea-contract-hooks-'));
    started.push({ close: () => rm(state, { recursive: true, force: true }) });
    const hook = await receiver();
    const first = await bin(['--state', state]);
    await unwrap(
      clientOf(first, 'kept').PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: {
          config: { url: `${hook.origin}/hook` },
          events: ['pull_request'],
          authorization_header: 'Bearer kept-part\r\n',
        },
      }),
    );
    expect(await first.stop()).toBe(0);
    const again = await bin(['--state', state]);
    await editPullOn(clientOf(again, 'kept'), { state: 'closed' });
    const [failed] = await settledLog(again, 'kept');
    expect([failed!.state, failed!.error]).toEqual([
      'failed',
      'the request failed: invalid header field value for "Authorization" (a line break or control character, which Go\'s client refuses to send)',
    ]);
    await editPullOn(clientOf(again, 'kept'), { state: 'open' });
    expect((await settledLog(again, 'kept')).map((entry) => entry.state)).toEqual(['failed', 'failed']);
    expect(again.child.exitCode).toBe(null);
    expect(hook.received).toEqual([]);
  });

  it('a system hook with a password, and one whose host does not resolve: no password in the log or the lines, and a failure that says what to do', async () => {
    const system = await receiver();
    const url = `http://hook-user:hook-password-77@127.0.0.1:${new URL(system.origin).port}/all`;
    const mock = await bin(['--webhook', url, '--webhook', 'http://hook.invalid/all']);
    await editPullOn(clientOf(mock, 'masked'), { state: 'closed' });
    const log = await settledLog(mock, 'masked');
    expect(JSON.stringify(log)).not.toContain('hook-password-77');
    expect(log.map((entry) => entry.url)).toEqual([
      `http://hook-user:******@127.0.0.1:${new URL(system.origin).port}/all`,
      'http://hook.invalid/all',
    ]);
    expect(log[0]!.state).toBe('delivered');
    // Sent as Go sends a URL's user and password: Basic.
    const [got] = await system.waitFor([log[0]!.id]);
    expect(got!.headers.authorization).toBe(`Basic ${Buffer.from('hook-user:hook-password-77').toString('base64')}`);
    expect(log[1]!.state).toBe('failed');
    expect(log[1]!.error).toMatch(/^not sent: hook\.invalid did not resolve \((ENOTFOUND|EAI_AGAIN)\)/);
    expect(log[1]!.error).toContain('--webhook-allowed-hosts');
    for (let tries = 0; !/webhook pull_request closed to http:\/\/hook\.invalid/.test(mock.output()); tries++) {
      expect(tries).toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mock.output()).not.toContain('hook-password-77');
  });
});
