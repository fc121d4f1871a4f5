// createWebhookRouter as a bot uses it: the document's own pull_request `closed` delivery, signed
// as Gitea signs it (node:crypto's HMAC, independent of the client's), reaches the handlers of its
// type, of its type and action, and onAny, and is answered 200; a wrong signature, a tampered body
// or one past the bound is answered 4xx and reaches no handler; a failing handler makes a 500 and
// reaches onError. createNodeMiddleware serves the same through a real node:http server.
import { createHmac } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deref, loadDocument } from '../support/mock-internals.js';
import {
  createNodeMiddleware,
  createWebhookRouter,
  type WebhookDelivery,
  type WebhookRouterError,
} from '../../src/index.js';

const SECRET = 'router-secret-51f0';
const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));
/** The document's example of a pull request closed, as Gitea writes it. */
const example = deref(doc, { $ref: '#/components/examples/WebhookPullRequestClosed' }, 'example').value as {
  value: unknown;
};
const CLOSED = JSON.stringify(example.value, null, 2);
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

function headersFor(body: string, signature = sign(body)): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-gitea-delivery': '0b0c3a55-6f60-4d0e-9d3c-6a0f1e2d3c4b',
    'x-gitea-event': 'pull_request',
    'x-gitea-event-type': 'pull_request',
    'x-gitea-hook-installation-target-type': 'repository',
    'x-gitea-signature': signature,
    'x-hub-signature-256': `sha256=${signature}`,
  };
}

const deliveryOf = (body: string, signature?: string): Request =>
  new Request('http://127.0.0.1/webhooks', { method: 'POST', headers: headersFor(body, signature), body });

/** A router whose handlers record what reached them. */
function recordingRouter(options: { maxBytes?: number } = {}) {
  const reached: string[] = [];
  const failures: WebhookRouterError[] = [];
  const router = createWebhookRouter({ secret: SECRET, ...options });
  router.on('pull_request.closed', (event) => void reached.push(`closed #${event.payload.number}`));
  router.on('pull_request', (event) => void reached.push(`pull_request ${event.payload.action}`));
  router.on('pull_request.reopened', () => void reached.push('reopened'));
  router.on('repository', () => void reached.push('repository'));
  router.onAny((event) => void reached.push(`any ${event.type}`));
  router.onError((failure) => void failures.push(failure));
  return { router, reached, failures };
}

describe('createWebhookRouter', () => {
  it('routes a signed pull_request closed to the handlers of its type and action, and answers 200', async () => {
    const { router, reached, failures } = recordingRouter();
    const answer = await router.fetch(deliveryOf(CLOSED));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('ok\n');
    expect(reached.sort()).toEqual(['any pull_request', 'closed #43', 'pull_request closed']);
    expect(failures).toEqual([]);
  });

  it("routes Forgejo 11's delivery: its X-Forgejo-* headers beside the X-Gitea-* twins, no target type", async () => {
    // services/webhook/shared/payloader.go AddDefaultHeaders @ v11.0/forgejo: X-Forgejo-*, X-Gitea-*
    // and X-Gogs-* carry the same values, and no …-Hook-Installation-Target-Type is set; records
    // carry Forgejo's own fields (User.pronouns, PullRequest.flow).
    const payload = example.value as { pull_request: Record<string, unknown>; sender: Record<string, unknown> };
    const body = JSON.stringify({
      ...payload,
      pull_request: { ...payload.pull_request, flow: 0 },
      sender: { ...payload.sender, pronouns: 'she/her' },
    });
    const { 'x-gitea-hook-installation-target-type': _none, ...gitea } = headersFor(body);
    const forgejo = Object.fromEntries(
      ['delivery', 'event', 'event-type', 'signature'].map((name) => [`x-forgejo-${name}`, gitea[`x-gitea-${name}`]!]),
    );
    const gogs = { 'x-gogs-delivery': gitea['x-gitea-delivery']!, 'x-gogs-event': 'pull_request' };
    const seen: WebhookDelivery[] = [];
    const router = createWebhookRouter({ secret: SECRET });
    router.on('pull_request.closed', (event) => {
      seen.push(event);
      expect(event.payload.sender.pronouns).toBe('she/her');
    });
    const answer = await router.fetch(
      new Request('http://127.0.0.1/webhooks', { method: 'POST', headers: { ...gitea, ...forgejo, ...gogs }, body }),
    );
    expect(answer.status).toBe(200);
    expect(seen.map(({ type, targetType, known }) => ({ type, targetType, known }))).toEqual([
      { type: 'pull_request', targetType: '', known: true },
    ]);
  });

  it('answers a wrong signature, a tampered body and an unsigned delivery 401, and runs no handler', async () => {
    const { router, reached, failures } = recordingRouter();
    const wrongSecret = await router.fetch(deliveryOf(CLOSED, sign(CLOSED, 'another secret')));
    const tampered = await router.fetch(deliveryOf(CLOSED.replace('"number": 43', '"number": 44'), sign(CLOSED)));
    const unsigned = await router.fetch(deliveryOf(CLOSED, ''));
    expect([wrongSecret.status, tampered.status, unsigned.status]).toEqual([401, 401, 401]);
    expect(await wrongSecret.text()).toBe('the signature does not match the payload and the secret\n');
    expect(reached).toEqual([]);
    expect(failures.map((failure) => failure.kind === 'refused' && failure.error.code)).toEqual([
      'bad-signature',
      'bad-signature',
      'missing-signature',
    ]);
  });

  it('answers a delivery past maxBytes 413 and one that is no Gitea delivery 400, running no handler', async () => {
    const { router, reached } = recordingRouter({ maxBytes: 1024 });
    expect((await router.fetch(deliveryOf(CLOSED))).status).toBe(413);
    const plain = await router.fetch(new Request('http://127.0.0.1/webhooks', { method: 'POST', body: '{}' }));
    expect(plain.status).toBe(400);
    expect((await router.fetch(new Request('http://127.0.0.1/webhooks', { method: 'PUT', body: '{}' }))).status).toBe(
      405,
    );
    expect(reached).toEqual([]);
  });

  it('answers 500 when a handler fails, after every handler ran, and tells onError which delivery', async () => {
    const router = createWebhookRouter({ secret: SECRET });
    const reached: string[] = [];
    const failures: WebhookRouterError[] = [];
    router.on('pull_request.closed', async () => {
      throw new Error('the bot is down');
    });
    router.onAny(() => void reached.push('any'));
    router.onError((failure) => void failures.push(failure));
    const answer = await router.fetch(deliveryOf(CLOSED));
    expect(answer.status).toBe(500);
    expect(reached).toEqual(['any']);
    expect(failures).toHaveLength(1);
    const [failure] = failures;
    expect(failure?.kind).toBe('handler');
    if (failure?.kind !== 'handler') return;
    expect((failure.error as Error).message).toBe('the bot is down');
    expect((failure.delivery as WebhookDelivery).delivery).toBe('0b0c3a55-6f60-4d0e-9d3c-6a0f1e2d3c4b');
  });

  it('refuses a missing secret at once, and takes null for a hook without one', async () => {
    expect(() => createWebhookRouter({ secret: '' })).toThrow(TypeError);
    const open = createWebhookRouter({ secret: null });
    let number: number | undefined;
    open.on('pull_request.closed', (event) => {
      number = event.payload.number;
    });
    expect((await open.fetch(deliveryOf(CLOSED, ''))).status).toBe(200);
    expect(number).toBe(43);
  });
});

describe('createNodeMiddleware', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((done) => (server ? server.close(done) : done(undefined)));
    server = undefined;
  });

  async function serve(listener: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(listener);
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('answers deliveries to its path through node:http, and 404 elsewhere', async () => {
    const { router, reached } = recordingRouter();
    const origin = await serve(createNodeMiddleware(router, { path: '/webhooks' }));
    const answer = await fetch(`${origin}/webhooks`, { method: 'POST', headers: headersFor(CLOSED), body: CLOSED });
    expect(answer.status).toBe(200);
    expect(reached.sort()).toEqual(['any pull_request', 'closed #43', 'pull_request closed']);
    const wrong = await fetch(`${origin}/webhooks`, {
      method: 'POST',
      headers: headersFor(CLOSED, sign(CLOSED, 'x')),
      body: CLOSED,
    });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${origin}/elsewhere`, { method: 'POST', body: CLOSED })).status).toBe(404);
    expect(reached).toHaveLength(3);
  });

  it('passes other paths to next, as Express does, and stops reading a body past the bound', async () => {
    const { router, reached } = recordingRouter({ maxBytes: 64 * 1024 });
    const middleware = createNodeMiddleware(router, { path: '/webhooks' });
    const passedOn: string[] = [];
    const origin = await serve((request, response) => {
      void middleware(request, response, () => {
        passedOn.push(String(request.url));
        response.writeHead(204);
        response.end();
      });
    });
    expect((await fetch(`${origin}/health`)).status).toBe(204);
    expect(passedOn).toEqual(['/health']);
    // Up to 8 MiB without a declared length, sent until the answer comes: refused once 64 KiB were read.
    const status = await new Promise<number>((done, fail) => {
      const upload = request(`${origin}/webhooks`, { method: 'POST', headers: headersFor(CLOSED) });
      upload.once('response', (answer) => {
        answer.resume();
        done(answer.statusCode ?? 0);
      });
      upload.once('error', fail);
      let sent = 0;
      const more = (): void => {
        while (sent < 128) {
          sent++;
          if (!upload.write(new Uint8Array(64 * 1024).fill(32))) return void upload.once('drain', more);
        }
        upload.end();
      };
      more();
    });
    expect(status).toBe(413);
    expect(reached).toEqual([]);
  });
});
