// Model-based: random sequences of sandbox writes and reads (fast-check commands) must agree,
// step by step, with a small model of what a Gitea 1.27 server keeps. Each sequence gets a
// credential, so a world, of its own. Seeded: FC_SEED replays another seed.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectAll, createGiteaClient, unwrap, type GiteaClient } from '../src/index.js';
import { apiErrorOf } from '../test/support/api-error.js';
import { call } from './support/call.js';
import { useSandbox } from './support/sandbox.js';

const SEED = Number(process.env.FC_SEED ?? 20261123);
/** Sequences per run: 60 in `npm test`; FC_RUNS=500 (say) for a deeper one. */
const RUNS = Number(process.env.FC_RUNS ?? 60);

const sandbox = useSandbox({ maxWorlds: 1000 });

interface Model {
  label: { name: string; color: string; description: string; exclusive: boolean; is_archived: boolean };
  milestone: { title: string; description: string; state: string; due_on: string | null };
  hook: { active: boolean; events: string[]; branch_filter: string; url: string };
  thread: { unread: boolean; pinned: boolean };
  /** Logins of alice, bob and carol, by id. */
  logins: Map<number, string>;
  /** Old names of renamed users, lower-cased, and whose id they lead to (Gitea's user redirects). */
  redirects: Map<string, number>;
  assignees: number[];
  secrets: Set<string>;
  repos: Set<string>;
  pull: { title: string; state: string; version: number; labels: number[] };
}

function seedModel(): Model {
  return {
    label: {
      name: 'priority/high',
      color: 'd93f0b',
      description: 'Needs attention before the next launch.',
      exclusive: true,
      is_archived: false,
    },
    milestone: { title: 'v1.1.0', description: 'Uncrewed test flight.', state: 'open', due_on: '2026-05-01T23:59:59Z' },
    hook: {
      active: true,
      events: ['push', 'release'],
      branch_filter: 'main',
      url: 'https://ci.example.net/hooks/gitea',
    },
    thread: { unread: true, pinned: false },
    logins: new Map([
      [1001, 'alice'],
      [1002, 'bob'],
      [1003, 'carol'],
    ]),
    redirects: new Map(),
    assignees: [1002, 1003],
    secrets: new Set(),
    repos: new Set(['acme/rocket']),
    pull: { title: 'Fix countdown off-by-one', state: 'open', version: 2, labels: [5002] },
  };
}

interface Real {
  gitea: GiteaClient;
  token: string;
}

async function status(call: Promise<{ response: Response }>): Promise<number> {
  return (await call).response.status;
}

const lower = (text: string): string => text.toLowerCase();
/** Each field present or absent, as a client sends only what it changes. */
const someOf = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) => fc.record(fields, { requiredKeys: [] });

/** Gitea's colour rules: three or six hex digits, with or without #, stored lower-case without it. */
function normalized(color: string): string {
  const hex = color.replace(/^#/, '').toLowerCase();
  return hex.length === 3 ? hex.replace(/./g, '$&$&') : hex;
}

class EditLabel implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly body: { name?: string; color?: string; description?: string; exclusive?: boolean; is_archived?: boolean },
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const label = await unwrap(
      gitea.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 5001 } }, body: this.body }),
    );
    const { color, is_archived, ...rest } = this.body;
    Object.assign(model.label, rest, color === undefined ? {} : { color: normalized(color) }, {
      is_archived: is_archived === true,
    });
    expect(label).toMatchObject(model.label);
  }
  toString = () => `EditLabel(${JSON.stringify(this.body)})`;
}

class EditMilestone implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly by: 'id' | 'hex' | 'title',
    readonly body: { title?: string; description?: string; state?: 'open' | 'closed'; due_on?: string },
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const id = this.by === 'id' ? '6000' : this.by === 'hex' ? '0x1770' : model.milestone.title;
    const milestone = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/milestones/{id}', {
        params: { path: { owner: 'acme', repo: 'rocket', id } },
        body: this.body,
      }),
    );
    const { title, description, state, due_on } = this.body;
    if (title) model.milestone.title = title;
    if (description !== undefined) model.milestone.description = description;
    if (state) model.milestone.state = state;
    model.milestone.due_on = due_on === undefined ? null : `${due_on.slice(0, 10)}T23:59:59Z`;
    expect(milestone).toMatchObject({ id: 6000, ...model.milestone });
    expect(milestone.closed_at === null).toBe(model.milestone.state === 'open');
  }
  toString = () => `EditMilestone(${this.by}, ${JSON.stringify(this.body)})`;
}

class EditHook implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly body: {
      active?: boolean;
      events?: ('push' | 'create' | 'release' | 'issues')[];
      branch_filter?: string;
      url?: string;
    },
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const { url, ...rest } = this.body;
    const hook = await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { owner: 'acme', repo: 'rocket', id: 4001 } },
        body: { ...rest, ...(url ? { config: { url } } : {}) },
      }),
    );
    if (this.body.active !== undefined) model.hook.active = this.body.active;
    // Gitea stores `issues` as the issue event and its four sub-events; the answer lists them in no set order.
    const expanded = (this.body.events ?? []).flatMap((event) =>
      event === 'issues' ? ['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment'] : [event],
    );
    model.hook.events = expanded.length > 0 ? [...new Set(expanded)] : ['push'];
    model.hook.branch_filter = this.body.branch_filter ?? '';
    if (url) model.hook.url = url;
    expect(hook).toMatchObject({
      active: model.hook.active,
      branch_filter: model.hook.branch_filter,
      config: { url: model.hook.url, content_type: 'json' },
    });
    expect(new Set(hook.events)).toEqual(new Set(model.hook.events));
  }
  toString = () => `EditHook(${JSON.stringify(this.body)})`;
}

class MarkThread implements fc.AsyncCommand<Model, Real> {
  constructor(readonly toStatus: 'read' | 'unread' | 'pinned' | 'PINNED' | 'bogus' | undefined) {}
  check = () => true;
  async run(model: Model, { token }: Real): Promise<void> {
    // node:http, not fetch: the thread is in the body of a 205, which fetch drops.
    const query = this.toStatus === undefined ? '' : `?to-status=${this.toStatus}`;
    const answer = await call(new URL(`${sandbox.current.baseUrl}/notifications/threads/10001${query}`), 'PATCH', {
      headers: {
        authorization: `token ${token}`,
      },
    });
    // As Gitea reads it: without regard to case, and anything but the three statuses as read.
    const named = (this.toStatus ?? 'read').toLowerCase();
    const wanted = ['unread', 'pinned'].includes(named) ? named : 'read';
    model.thread = { unread: wanted === 'unread', pinned: wanted === 'pinned' };
    expect(answer.status).toBe(205);
    expect(JSON.parse(answer.body)).toMatchObject(model.thread);
  }
  toString = () => `MarkThread(${String(this.toStatus)})`;
}

const NAMES = ['alice', 'bob', 'carol', 'robert', 'Carol', 'dave', 'acme', 'bobby'];

class Rename implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly from: string,
    readonly to: string,
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const call = gitea.POST('/admin/users/{username}/rename', {
      params: { path: { username: this.from } },
      body: { new_username: this.to },
    });
    // An old name answers 307 to the user's current name, which fetch follows.
    const id =
      [...model.logins].find(([, login]) => lower(login) === lower(this.from))?.[0] ??
      model.redirects.get(lower(this.from));
    if (id === undefined) {
      // An organization's name is refused as not being a user; any other name is unknown.
      expect((await apiErrorOf(unwrap(call))).status).toBe(lower(this.from) === 'acme' ? 422 : 404);
      return;
    }
    const taken =
      [...model.logins].some(([other, login]) => other !== id && lower(login) === lower(this.to)) ||
      lower(this.to) === 'acme';
    if (this.to !== model.logins.get(id) && taken) {
      expect((await apiErrorOf(unwrap(call))).status).toBe(422);
      return;
    }
    expect(await status(call)).toBe(204);
    const old = model.logins.get(id)!;
    if (lower(old) !== lower(this.to)) {
      model.redirects.delete(lower(this.to));
      model.redirects.set(lower(old), id);
    }
    model.logins.set(id, this.to);
  }
  toString = () => `Rename(${this.from} → ${this.to})`;
}

class ReadTeam implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const members = await collectAll(gitea, '/teams/{id}/members', {
      params: { path: { id: 12001 }, query: { limit: 2 } },
    });
    expect(members.map((user) => [user.id, user.login])).toEqual([...model.logins]);
  }
  toString = () => 'ReadTeam';
}

class Unassign implements fc.AsyncCommand<Model, Real> {
  constructor(readonly names: string[]) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const call = unwrap(
      gitea.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { owner: 'acme', repo: 'rocket', index: 42 } },
        body: { assignees: this.names },
      }),
    );
    const ids = this.names.map((name) => [...model.logins].find(([, login]) => lower(login) === lower(name))?.[0]);
    // The handler answers an unknown name with 404 (Gitea's error for a user that does not exist).
    if (ids.includes(undefined)) {
      expect((await apiErrorOf(call)).status).toBe(404);
      return;
    }
    model.assignees = model.assignees.filter((id) => !ids.includes(id));
    const issue = await call;
    // Nobody assigned is null, not an empty list.
    expect(issue.assignees?.map((user) => [user.id, user.login]) ?? null).toEqual(
      model.assignees.length > 0 ? model.assignees.map((id) => [id, model.logins.get(id)]) : null,
    );
  }
  toString = () => `Unassign(${this.names.join(', ')})`;
}

class PutSecret implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const answered = await status(
      gitea.PUT('/user/actions/secrets/{secretname}', {
        params: { path: { secretname: this.name } },
        body: { data: 'value' },
      }),
    );
    const key = this.name.toUpperCase();
    expect(answered).toBe(model.secrets.has(key) ? 204 : 201);
    model.secrets.add(key);
  }
  toString = () => `PutSecret(${this.name})`;
}

class Migrate implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly owner: 'acme' | 'bluebird',
    readonly name: string,
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const call = unwrap(
      gitea.POST('/repos/migrate', {
        body: { clone_addr: 'https://git.example.net/x.git', repo_name: this.name, repo_owner: this.owner },
      }),
    );
    const key = lower(`${this.owner}/${this.name}`);
    if (model.repos.has(key)) {
      expect((await apiErrorOf(call)).status).toBe(409);
      return;
    }
    expect((await call).full_name).toBe(`${this.owner}/${this.name}`);
    model.repos.add(key);
  }
  toString = () => `Migrate(${this.owner}/${this.name})`;
}

class EditPull implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly stale: boolean,
    readonly body: { title?: string; body?: string; state?: 'open' | 'closed'; labels?: number[] },
  ) {}
  check = () => true;
  async run(model: Model, { gitea }: Real): Promise<void> {
    const content_version = this.stale ? model.pull.version - 1 : model.pull.version;
    const call = unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { owner: 'acme', repo: 'rocket', index: 43 } },
        body: { ...this.body, content_version },
      }),
    );
    if (this.stale) {
      expect((await apiErrorOf(call)).status).toBe(409);
      return;
    }
    if (this.body.title) model.pull.title = this.body.title;
    if (this.body.state) model.pull.state = this.body.state;
    if (this.body.labels) model.pull.labels = [5002, 5001].filter((id) => this.body.labels!.includes(id));
    // Gitea moves content_version on only when the description is sent.
    if (this.body.body !== undefined) model.pull.version++;
    const pull = await call;
    expect(pull).toMatchObject({
      title: model.pull.title,
      state: model.pull.state,
      content_version: model.pull.version,
    });
    expect(pull.labels!.map((label) => [label.id, label.name])).toEqual(
      model.pull.labels.map((id) => [id, id === 5001 ? model.label.name : 'kind/bug']),
    );
    expect(pull.user!.login).toBe(model.logins.get(1001));
  }
  toString = () => `EditPull(${this.stale ? 'stale, ' : ''}${JSON.stringify(this.body)})`;
}

class Reset implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, { token }: Real): Promise<void> {
    expect(
      (
        await call(new URL(`${sandbox.current.origin}/__sandbox/reset`), 'POST', {
          headers: { authorization: `token ${token}` },
        })
      ).status,
    ).toBe(200);
    Object.assign(model, seedModel());
  }
  toString = () => 'Reset';
}

const date = fc
  .date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z'));
const commands = [
  someOf({
    name: fc.constantFrom('wontfix', 'later', 'priority/high', ''),
    color: fc.constantFrom('#ABC', 'abc', '#00AA11', 'ff0000'),
    description: fc.constantFrom('', 'Ship it.'),
    exclusive: fc.boolean(),
    is_archived: fc.boolean(),
  }).map((body) => new EditLabel(body)),
  fc
    .tuple(
      fc.constantFrom('id' as const, 'hex' as const, 'title' as const),
      someOf({
        title: fc.constantFrom('v1.1.0', 'uncrewed', 'v1.1.1-rc', ''),
        description: fc.constantFrom('', 'Slipped.'),
        state: fc.constantFrom('open' as const, 'closed' as const),
        due_on: date,
      }),
    )
    .map(([by, body]) => new EditMilestone(by, body)),
  someOf({
    active: fc.boolean(),
    events: fc.array(fc.constantFrom('push' as const, 'create' as const, 'release' as const, 'issues' as const), {
      maxLength: 3,
    }),
    branch_filter: fc.constantFrom('main', 'release/*', ''),
    url: fc.constantFrom('https://ci.example.net/a', 'https://ci.example.net/b'),
  }).map((body) => new EditHook(body)),
  fc
    .constantFrom('read' as const, 'unread' as const, 'pinned' as const, 'PINNED' as const, 'bogus' as const, undefined)
    .map((to) => new MarkThread(to)),
  fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...NAMES)).map(([from, to]) => new Rename(from, to)),
  fc.constant(new ReadTeam()),
  fc.subarray(NAMES.slice(0, 6), { maxLength: 2 }).map((names) => new Unassign(names)),
  fc.constantFrom('DEPLOY_TOKEN', 'deploy_token', 'NPM_TOKEN', 'x1').map((name) => new PutSecret(name)),
  fc
    .tuple(
      fc.constantFrom('acme' as const, 'bluebird' as const),
      fc.constantFrom('rocket', 'Rocket', 'launchpad', 'telemetry'),
    )
    .map(([owner, name]) => new Migrate(owner, name)),
  fc
    .tuple(
      fc.boolean(),
      someOf({
        title: fc.constantFrom('Keep every second', ''),
        body: fc.constantFrom('Every second counts.', ''),
        state: fc.constantFrom('open' as const, 'closed' as const),
        labels: fc.subarray([5001, 5002, 777]),
      }),
    )
    .map(([stale, body]) => new EditPull(stale, body)),
  fc.constant(new Reset()),
];

describe(`the sandbox agrees with a model of Gitea (fast-check seed ${SEED}, ${RUNS} sequences)`, () => {
  it('random sequences of writes and reads', async () => {
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30, size: 'large' }), async (sequence) => {
        const token = `model-${randomUUID()}`;
        const setup = () => ({
          model: seedModel(),
          real: { gitea: createGiteaClient({ baseUrl: sandbox.current.baseUrl, auth: { token }, retry: 0 }), token },
        });
        await fc.asyncModelRun(setup, sequence);
        steps += [...sequence].length;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`sandbox model: seed ${SEED}, ${RUNS} sequences, ${steps} steps`);
    // Sequences long enough for writes to meet later reads.
    expect(steps / RUNS).toBeGreaterThan(10);
  }, 120_000);
});
