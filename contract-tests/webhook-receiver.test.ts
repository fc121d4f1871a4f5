// `gitea-mock webhooks`, the built bin as users run it, against the sandbox's own deliveries:
// every one conforms; a tampered body, a wrong secret, a payload missing a field are each
// reported (line, JSON report, JUnit XML, exit code 1), an event outside the contract is told
// apart, and neither the secret nor a hook's authorization header shows anywhere. With --forward
// the delivery reaches the app unchanged, on the app's origin only, and the app's answer goes back
// and is recorded: an app that refuses fails the run. What a peer sends is bounded as the front
// bounds it. Everything a test starts stops after it, whatever its outcome.
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGiteaClient, unwrap } from '../src/index.js';
import { startMockServer, type MockServer } from '../mock/src/server.js';
import { type DeliveryRecord, loadDocument } from '../test/support/mock-internals.js';
import { serveOnLoopback } from '../test/support/loopback.js';
import { startHookReceiver, type Answering, type HookReceiver } from './support/hook-receiver.js';
import { call, type Reply } from './support/call.js';
import { exchangeRaw } from './support/http.js';
import { startReceiverBin } from './support/receiver-bin.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const SECRET = 'receiver-secret-31337';
const HOOK_TOKEN = 'Bearer hook-token-8c2f';
const rocket = { owner: 'acme', repo: 'rocket' } as const;

/** What a test started, stopped after it whatever its outcome. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** A hook receiver (the app behind --forward), closed after the test. */
async function app(answering?: Answering): Promise<HookReceiver> {
  const started = await startHookReceiver(answering);
  cleanups.push(() => started.close());
  return started;
}

/** A mock sandbox delivering to `systemHooks`, closed after the test; `settled(n)` resolves once n deliveries have ended. */
async function sandbox(systemHooks: string[]): Promise<{ server: MockServer; settled(count: number): Promise<void> }> {
  let ended = 0;
  const waiters = new Set<() => void>();
  const server = await startMockServer({
    port: 0,
    sandbox: {
      webhooks: {
        secret: SECRET,
        systemHooks,
        // Far past what a loaded machine needs: the receiver's answer, not a clock, ends each delivery.
        timeoutMs: 120_000,
        onDelivery: () => {
          ended++;
          for (const wake of waiters) wake();
        },
      },
    },
  });
  cleanups.push(() => server.close());
  return {
    server,
    settled: (count) =>
      new Promise<void>((resolve) => {
        const wake = (): void => {
          if (ended < count) return;
          waiters.delete(wake);
          resolve();
        };
        waiters.add(wake);
        wake();
      }),
  };
}

/** The world's delivery log. */
async function deliveryLog(server: MockServer, token: string): Promise<DeliveryRecord[]> {
  const answer = await call(`${new URL(server.baseUrl).origin}/__sandbox/deliveries`, 'GET', { token });
  return (answer.json as { deliveries: DeliveryRecord[] }).deliveries;
}

/** What a raw request (written by hand, as `head` says, then `body`) is answered, read to the connection's end. */
async function rawRequest(origin: string, head: string, body = ''): Promise<string> {
  return (await exchangeRaw(origin, Buffer.from(`${head}\r\n\r\n${body}`))).toString('latin1');
}

/** Sends a delivery to the receiver as the sandbox logged it, with `body` and signatures changed as given. */
function resend(origin: string, entry: DeliveryRecord, body: string, secret: string): Promise<Reply> {
  const sha256 = createHmac('sha256', secret).update(body).digest('hex');
  const headers = {
    ...entry.headers,
    Authorization: HOOK_TOKEN,
    'X-Gitea-Delivery': randomUUID(),
    'X-Gitea-Signature': sha256,
    'X-Gogs-Signature': sha256,
    'X-Hub-Signature-256': `sha256=${sha256}`,
    'X-Hub-Signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  };
  return call(`${origin}/hook`, 'POST', { headers, body });
}

/** A delivery of `payload` as services/webhook/deliver.go sends it to a repository's JSON hook with `secret`. */
function giteaDelivery(origin: string, type: string, event: string, payload: unknown, secret: string): Promise<Reply> {
  const body = JSON.stringify(payload, null, 2);
  const sha256 = createHmac('sha256', secret).update(body).digest('hex');
  const id = randomUUID();
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const name of ['Gitea', 'Gogs', 'GitHub'])
    Object.assign(headers, { [`X-${name}-Delivery`]: id, [`X-${name}-Event`]: event, [`X-${name}-Event-Type`]: type });
  Object.assign(headers, {
    'X-Gitea-Signature': sha256,
    'X-Gogs-Signature': sha256,
    'X-Hub-Signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
    'X-Hub-Signature-256': `sha256=${sha256}`,
    'X-Gitea-Hook-Installation-Target-Type': 'repository',
    'X-GitHub-Hook-Installation-Target-Type': 'repository',
  });
  return call(`${origin}/hook`, 'POST', { headers, body });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-receiver-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Each test waits for events (a line, a delivery's end, an answer), bounded by this only, so a busy machine slows it, never fails it.
describe('gitea-mock webhooks', { timeout: 120_000 }, () => {
  it("checks the sandbox's deliveries, all conforming, and reports each broken one", async () => {
    const report = join(dir, 'report.json');
    const junit = join(dir, 'junit.xml');
    const bin = await startReceiverBin(['--report', report, '--junit', junit], SECRET);
    const { server, settled } = await sandbox([`${bin.origin}/system`]);
    const token = `receiver-${randomUUID()}`;
    const gitea = createGiteaClient({ baseUrl: server.baseUrl, auth: { token }, retry: 0 });
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/hooks/{id}', {
        params: { path: { ...rocket, id: 4001 } },
        body: {
          config: { url: `${bin.origin}/hook`, content_type: 'form' },
          events: ['issues', 'pull_request'],
          authorization_header: HOOK_TOKEN,
        },
      }),
    );
    await unwrap(
      gitea.PATCH('/repos/{owner}/{repo}/pulls/{index}', {
        params: { path: { ...rocket, index: 43 } },
        body: {
          title: 'Retitled',
          body: 'New text.',
          assignees: ['carol'],
          milestone: 6000,
          base: 'develop',
        },
      }),
    );
    // Closed after the new base: Gitea refuses a new base for a closed pull request.
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
    await unwrap(
      gitea.POST('/repos/migrate', { body: { clone_addr: 'https://git.example.net/up/x.git', repo_name: 'x' } }),
    );
    // 7 from the pull request and 1 from the issue, each to both hooks, and the repository to the system hook.
    await settled(17);
    const log = await deliveryLog(server, token);
    expect(log.map((entry) => entry.state)).toEqual(Array(17).fill('delivered'));

    const json = log.find((entry) => entry.type === 'repository')!;
    const broken = [
      // A tampered body: the signatures no longer match it.
      call(`${bin.origin}/hook`, 'POST', { headers: json.headers, body: json.body.replace('"created"', '"created" ') }),
      // Signed with another secret.
      resend(bin.origin, json, json.body, 'not-the-secret'),
      // A payload without its sender, signed right.
      resend(bin.origin, json, JSON.stringify({ ...JSON.parse(json.body), sender: undefined }, null, 1), SECRET),
      // An event the contract does not describe (one of GitHub's, which Gitea does not send).
      call(`${bin.origin}/hook`, 'POST', {
        headers: { 'Content-Type': 'application/json', 'X-Gitea-Event': 'star', 'X-Gitea-Event-Type': 'star' },
        body: '{"action":"created"}',
      }),
    ];
    const answers = await Promise.all(broken);
    expect(answers.map((answer) => [answer.status, answer.headers['x-contract-violations']])).toEqual([
      [200, '4'],
      [200, '4'],
      [200, '1'],
      [200, '0'],
    ]);
    expect(await bin.stop()).toBe(1);

    const lines = bin.output().split('\n');
    expect(lines.filter((line) => line.endsWith(': conforms'))).toHaveLength(17);
    const violations = lines.filter((line) => line.startsWith('gitea-mock: contract: webhook repository created '));
    expect(violations).toHaveLength(3);
    expect(violations[0]).toMatch(
      /: 4 violations: request header X-Gitea-Signature: does not match the payload signed with the secret given; request header X-Gogs-Signature: does not match/,
    );
    expect(violations[1]).toMatch(/: 4 violations: request header X-Gitea-Signature: does not match/);
    expect(violations[2]).toMatch(/: 1 violation: request body \/sender: missing \(required by the document\)$/);
    expect(
      lines.some((line) =>
        /webhook \(no X-Gitea-Delivery\): not checked: the event type "star" is not in the contract/.test(line),
      ),
    ).toBe(true);
    expect(bin.output()).toMatch(/3 of 20 deliveries broke the contract: exit code 1/);

    const written = JSON.parse(await readFile(report, 'utf8')) as {
      webhooks: Record<string, { exchanges: number; withViolations: number; violations: Record<string, number> }>;
      notInContract: { deliveries: number };
    };
    expect(written.webhooks).toMatchObject({
      pull_request: { exchanges: 8, withViolations: 0 },
      pull_request_assign: { exchanges: 4, withViolations: 0 },
      pull_request_milestone: { exchanges: 2, withViolations: 0 },
      issue_assign: { exchanges: 2, withViolations: 0 },
      repository: { exchanges: 4, withViolations: 3, violations: { 'request.headers': 8, 'request.body': 1 } },
    });
    expect(written.notInContract).toEqual({ deliveries: 1 });
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="gitea-mock webhooks" tests="22" failures="3" errors="0"/);
    expect(xml).toMatch(/<skipped message="the event type &quot;star&quot; is not in the contract/);
    for (const text of [bin.output(), JSON.stringify(written), xml]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('hook-token-8c2f');
    }
  });

  it('checks a delivery of each kind Gitea sends: the named examples conform, a broken one is reported', async () => {
    const doc = loadDocument(new URL('../openapi.yaml', import.meta.url));
    const examples = (doc.components as { examples: Record<string, { value: Record<string, unknown> }> }).examples;
    const example = (name: string): Record<string, unknown> => structuredClone(examples[name]!.value);
    const withoutTagName = (payload: Record<string, unknown>) => ({
      ...payload,
      release: { ...(payload.release as object), tag_name: undefined },
    });
    const bin = await startReceiverBin([], SECRET);
    let code: number | null = null;
    try {
      const sent = [
        ['push', 'push', example('WebhookPushMain')],
        ['issue_comment', 'issue_comment', example('WebhookIssueCommentCreated')],
        ['release', 'release', example('WebhookReleasePublished')],
        ['pull_request_review_approved', 'pull_request_approved', example('WebhookPullRequestReviewApproved')],
        // A release without its tag name.
        ['release', 'release', withoutTagName(example('WebhookReleasePublished'))],
        // An approval sent under the group of an ordinary pull request delivery.
        ['pull_request_review_approved', 'pull_request', example('WebhookPullRequestReviewApproved')],
      ] as const;
      const answers: unknown[] = [];
      for (const [type, event, payload] of sent)
        answers.push((await giteaDelivery(bin.origin, type, event, payload, SECRET)).headers['x-contract-violations']);
      expect(answers.slice(0, 4)).toEqual(['0', '0', '0', '0']);
      expect(answers[4]).toBe('1');
      // X-Gitea-Event, X-Gogs-Event and X-GitHub-Event each name the wrong group.
      expect(answers[5]).toBe('3');
    } finally {
      code = await bin.stop();
    }
    expect(code).toBe(1);
    const lines = bin.output().split('\n');
    for (const kind of ['push', 'issue_comment created', 'release published', 'pull_request_review_approved reviewed'])
      expect(
        lines.filter((line) => line.includes(`webhook ${kind} `) && line.endsWith(': conforms')),
        kind,
      ).toHaveLength(1);
    expect(lines).toContainEqual(
      expect.stringMatching(/webhook release published .*: 1 violation: request body \/release\/tag_name: missing/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /webhook pull_request_review_approved reviewed .*: 3 violations: request header X-Gitea-Event/,
      ),
    );
  });

  it('passes each delivery on to the app with --forward, unchanged, and answers with its answer', async () => {
    const forwardedTo = await app();
    const bin = await startReceiverBin(['--forward', `${forwardedTo.origin}/app`, '--quiet'], SECRET);
    const body = '{"action":"created"}';
    const sha256 = createHmac('sha256', SECRET).update(body).digest('hex');
    const answer = await fetch(`${bin.origin}/hook?x=1`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Gitea-Event-Type': 'repository',
        'X-Gitea-Delivery': '2b2c9a50-6d1f-4f3e-9a8e-0c5d7f1e2a3b',
        'X-Gitea-Signature': sha256,
      },
      body,
    });
    expect([answer.status, await answer.text()]).toEqual([200, 'thanks']);
    // The payload lacks most of what the document requires, and that is said, but it still goes on.
    expect(Number(answer.headers.get('x-contract-violations'))).toBeGreaterThan(3);
    const [got] = await forwardedTo.waitFor(['2b2c9a50-6d1f-4f3e-9a8e-0c5d7f1e2a3b']);
    expect([got!.path, got!.body, got!.headers['x-gitea-signature']]).toEqual(['/app/hook?x=1', body, sha256]);
    await forwardedTo.close();
    // The app gone: a 502 that says so.
    const gone = await fetch(`${bin.origin}/hook`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Gitea-Event-Type': 'push' },
      body: '{}',
    });
    expect(gone.status).toBe(502);
    expect(await gone.text()).toMatch(/could not be reached: ECONNREFUSED/);
    expect(await bin.stop()).toBe(1);
  });

  it('contacts the --forward origin only: an absolute or //host request target never reaches another server', async () => {
    const forwardedTo = await app();
    let reached = 0;
    const elsewhere = createServer((_req, res) => res.end('internal secrets'));
    elsewhere.on('connection', () => reached++);
    const other = await serveOnLoopback(elsewhere, () => elsewhere.closeAllConnections());
    cleanups.push(() => other.close());
    const bin = await startReceiverBin(['--forward', `${forwardedTo.origin}/app`, '--quiet']);
    const head = (target: string, id: string): string =>
      [
        `POST ${target} HTTP/1.1`,
        `Host: ${new URL(bin.origin).host}`,
        'Content-Type: application/json',
        'X-Gitea-Event-Type: push',
        `X-Gitea-Delivery: ${id}`,
        'Content-Length: 2',
        'Connection: close',
      ].join('\r\n');
    const elsewhereOrigin = `127.0.0.1:${other.port}`;
    const absolute = await rawRequest(bin.origin, head(`http://${elsewhereOrigin}/steal?x=1`, 'absolute'), '{}');
    expect(absolute).toMatch(/^HTTP\/1\.1 400 /);
    expect(absolute).toMatch(/the request target must be a path such as \/hook/);
    const https = await rawRequest(bin.origin, head(`https://${elsewhereOrigin}/steal`, 'https'), '{}');
    expect(https).toMatch(/^HTTP\/1\.1 400 /);
    // A path that begins with two slashes stays a path below the app's.
    const doubled = await rawRequest(bin.origin, head(`//${elsewhereOrigin}/steal?x=1`, 'doubled'), '{}');
    expect(doubled).toMatch(/^HTTP\/1\.1 200 /);
    expect(doubled).not.toContain('internal secrets');
    const [got] = await forwardedTo.waitFor(['doubled']);
    expect(got!.path).toBe(`/app//${elsewhereOrigin}/steal?x=1`);
    expect(forwardedTo.received.map((each) => each.headers['x-gitea-delivery'])).toEqual(['doubled']);
    expect(reached).toBe(0);
  });

  it("records the app's status with --forward: an app that answers 500 fails the delivery and the run", async () => {
    const report = join(dir, 'forward-report.json');
    const junit = join(dir, 'forward-junit.xml');
    const failing = await app('fail');
    const bin = await startReceiverBin(['--forward', failing.origin, '--report', report, '--junit', junit], SECRET);
    const { server, settled } = await sandbox([`${bin.origin}/system`]);
    const token = `forward-${randomUUID()}`;
    const gitea = createGiteaClient({ baseUrl: server.baseUrl, auth: { token }, retry: 0 });
    await unwrap(
      gitea.POST('/repos/migrate', { body: { clone_addr: 'https://git.example.net/up/x.git', repo_name: 'x' } }),
    );
    await settled(1);
    const [delivery] = await deliveryLog(server, token);
    // The sandbox, as Gitea, sees the app's answer.
    expect([delivery!.state, delivery!.status]).toEqual(['failed', 500]);
    expect(await bin.stop()).toBe(1);
    const line = bin
      .output()
      .split('\n')
      .find((each) => each.includes(delivery!.id));
    expect(line).toMatch(/: conforms; the app at http:\/\/127\.0\.0\.1:\d+ answered 500$/);
    expect(bin.output()).toMatch(/1 of 1 deliveries was refused by the app at http:\/\/127\.0\.0\.1:\d+: exit code 1/);
    const written = JSON.parse(await readFile(report, 'utf8')) as Record<string, unknown>;
    expect(written.forwarded).toEqual({ app: failing.origin, deliveries: 1, refused: 1, statuses: { '500': 1 } });
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/tests="2" failures="1" errors="0"/);
    expect(xml).toMatch(/<failure message="the app at http:\/\/127\.0\.0\.1:\d+ answered 500" type="app"/);
    for (const text of [bin.output(), JSON.stringify(written), xml]) expect(text).not.toContain(SECRET);
  });

  it('refuses a payload past the JSON bounds, naming the bound, and goes on receiving', async () => {
    const bin = await startReceiverBin([]);
    const post = (body: string): Promise<Reply> =>
      call(`${bin.origin}/hook`, 'POST', {
        headers: { 'Content-Type': 'application/json', 'X-Gitea-Event-Type': 'repository' },
        body,
      });
    const many = await post(JSON.stringify({ action: 'created', list: Array.from({ length: 30_000 }, (_, i) => i) }));
    expect([many.status, many.body]).toEqual([
      413,
      'the payload holds more than 20000 JSON values, more than the receiver checks\n',
    ]);
    // A million levels: refused, not a stack overflow.
    const deep = await post(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    expect([deep.status, deep.body]).toEqual([
      422,
      'the payload nests deeper than 10000 levels, more than the receiver checks\n',
    ]);
    // A declared length past the limit is refused before a byte of it is read.
    const { host } = new URL(bin.origin);
    const large = await rawRequest(
      bin.origin,
      `POST /hook HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024 + 1}`,
    );
    expect(large).toMatch(/^HTTP\/1\.1 413 /);
    expect(large).toMatch(/\r\n\r\nrequest body exceeds 10485760 bytes\n$/);
    const fine = await post('{"action":"created"}');
    expect(fine.status).toBe(200);
    expect(await bin.stop()).toBe(1);
    expect(bin.output()).toMatch(
      /gitea-mock: a delivery to \/hook was refused \(413\): the payload holds more than 20000 JSON values/,
    );
    expect(bin.output()).toMatch(/refused \(422\): the payload nests deeper than 10000 levels/);
    expect(bin.output()).toMatch(/refused \(413\): request body exceeds 10485760 bytes/);
  });

  it('bounds its connections: past 32 busy ones a new one is refused, and the longest idle is closed first', async () => {
    const bin = await startReceiverBin([]);
    const { hostname, port } = new URL(bin.origin);
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => resolve(socket));
        socket.once('error', reject);
      });
    const sockets: Socket[] = [];
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
    });
    /** A connection part-way through a body; it resolves once the receiver has begun the request (its 100 Continue). */
    const busy = async (): Promise<void> => {
      const socket = await open();
      sockets.push(socket);
      const begun = new Promise((resolve) => socket.once('data', resolve));
      socket.write(
        `POST /hook HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n`,
      );
      expect(String(await begun)).toMatch(/^HTTP\/1\.1 100 Continue/);
      socket.write('{"a":');
    };
    // An idle connection first, then 31 part-way through a large body.
    const idle = await open();
    sockets.push(idle);
    const idleClosed = new Promise((resolve) => idle.once('close', resolve));
    for (let i = 0; i < 31; i++) await busy();
    // The 33rd closes the idle one and is answered.
    const answered = await fetch(`${bin.origin}/hook`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Gitea-Event-Type': 'push', Connection: 'close' },
      body: '{}',
    });
    expect(answered.status).toBe(200);
    await idleClosed;
    // A busy request holds its connection until its body ends: one more fills the ceiling.
    await busy();
    // Every connection is busy now: the next is answered 503 and closed.
    const refused = await rawRequest(bin.origin, `GET /hook HTTP/1.1\r\nHost: ${hostname}`);
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused).toMatch(/too many deliveries are being received at once; try again shortly/);
  });

  it('refuses a wrong option with the usage and exit code 2, and exits 2 when nothing of the contract came', async () => {
    const wrong = spawn(process.execPath, [CLI, 'webhooks', '--forward', 'ftp://app'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    wrong.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => wrong.once('exit', resolve));
    expect([code, stderr.split('\n')[0]]).toEqual([
      2,
      'gitea-mock webhooks: --forward ftp://app: give an http or https URL of your app',
    ]);
    const idle = await startReceiverBin([]);
    expect(await idle.stop()).toBe(2);
    expect(idle.output()).toMatch(/no delivery of the contract was received: exit code 2/);
  });
});
