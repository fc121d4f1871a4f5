// The client's webhook helpers: verifyWebhookSignature against signatures made with node:crypto
// (an independent HMAC), and parseWebhook on deliveries as Gitea sends them (JSON, form, GET),
// refusing what is unsigned, wrongly signed, tampered with or unreadable; and an app that only
// makes a client bundles none of it. The runtime table
// (test/runtimes/) runs the same helpers in Node 22 and 24, Deno, Bun and Chromium.
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseWebhook, verifyWebhookSignature, WebhookError } from '../../src/index.js';
import { isObject, listWebhooks, loadDocument } from '../support/mock-internals.js';

const SECRET = 'hook-secret-7c1e';
/** Every event type a Gitea hook can listen to (modules/webhook/type.go `AllEvents`). */
const GITEA_EVENT_TYPES = [
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
  'pull_request_sync',
  'pull_request_review_request',
  'wiki',
  'repository',
  'release',
  'package',
  'status',
  'workflow_run',
  'workflow_job',
] as const;
const PAYLOAD = `{\n  "action": "closed",\n  "number": 43,\n  "pull_request": {\n    "title": "Fix countdown ✓"\n  }\n}`;
const sign = (body: string | Buffer, secret = SECRET): string =>
  createHmac('sha256', secret).update(body).digest('hex');

/** A delivery as Gitea sends it to a JSON hook, with its headers. */
function delivery(
  body: string,
  {
    type = 'pull_request',
    event = 'pull_request',
    signature = sign(body),
    headers = {},
  }: { type?: string; event?: string; signature?: string; headers?: Record<string, string> } = {},
): Request {
  return new Request('http://127.0.0.1/hook', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gitea-delivery': '6f1c2b9e-2f4d-4c8a-9b7e-1d3a5c7e9f02',
      'x-gitea-event': event,
      'x-gitea-event-type': type,
      'x-gitea-signature': signature,
      'x-gitea-hook-installation-target-type': 'repository',
      'x-hub-signature-256': `sha256=${signature}`,
      ...headers,
    },
    body,
  });
}

async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WebhookError);
  return error as WebhookError;
}

describe('verifyWebhookSignature', () => {
  it('accepts the HMAC-SHA256 node:crypto makes, as hexadecimal or sha256=…, of a string, bytes or an ArrayBuffer', async () => {
    const signature = sign(PAYLOAD);
    const bytes = new TextEncoder().encode(PAYLOAD);
    expect(await verifyWebhookSignature(SECRET, PAYLOAD, signature)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, PAYLOAD, `sha256=${signature}`)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, PAYLOAD, signature.toUpperCase())).toBe(true);
    expect(await verifyWebhookSignature(SECRET, bytes, signature)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, bytes.buffer, signature)).toBe(true);
    // A view into a larger buffer is only its own bytes.
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    expect(await verifyWebhookSignature(SECRET, padded.subarray(4, 4 + bytes.length), signature)).toBe(true);
    // A secret in UTF-8, as Gitea keys the HMAC with the secret's bytes.
    expect(await verifyWebhookSignature('sécret✓', PAYLOAD, sign(PAYLOAD, 'sécret✓'))).toBe(true);
  });

  it('refuses a tampered body, a wrong secret, an empty or malformed signature', async () => {
    const signature = sign(PAYLOAD);
    expect(await verifyWebhookSignature(SECRET, PAYLOAD.replace('43', '44'), signature)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, `${PAYLOAD} `, signature)).toBe(false);
    expect(await verifyWebhookSignature('another-secret', PAYLOAD, signature)).toBe(false);
    for (const malformed of [
      '',
      'sha256=',
      signature.slice(0, 63),
      `${signature}00`,
      `sha1=${signature}`,
      `sha256:${signature}`,
      signature.replace(/^./, 'g'),
      createHmac('sha1', SECRET).update(PAYLOAD).digest('hex'),
    ])
      expect(await verifyWebhookSignature(SECRET, PAYLOAD, malformed)).toBe(false);
    await expect(verifyWebhookSignature('', PAYLOAD, signature)).rejects.toThrow(TypeError);
  });
});

describe('parseWebhook', () => {
  it('reads a signed JSON delivery of the contract, typed by its event type', async () => {
    const parsed = await parseWebhook(delivery(PAYLOAD), { secret: SECRET });
    expect(parsed).toEqual({
      known: true,
      event: 'pull_request',
      type: 'pull_request',
      delivery: '6f1c2b9e-2f4d-4c8a-9b7e-1d3a5c7e9f02',
      targetType: 'repository',
      payload: JSON.parse(PAYLOAD),
    });
    if (parsed.known && parsed.type === 'pull_request')
      expect(parsed.payload.pull_request.title).toBe('Fix countdown ✓');
  });

  it('reads the form variant and a GET hook, the signature taken over the JSON payload', async () => {
    const form = new Request('http://127.0.0.1/hook', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-gitea-event': 'pull_request',
        'x-gitea-event-type': 'pull_request',
        'x-gitea-signature': sign(PAYLOAD),
      },
      body: new URLSearchParams({ payload: PAYLOAD }).toString(),
    });
    expect((await parseWebhook(form, { secret: SECRET })).payload).toEqual(JSON.parse(PAYLOAD));
    const get = new Request(`http://127.0.0.1/hook?${new URLSearchParams({ payload: PAYLOAD })}`, {
      headers: { 'x-gitea-event-type': 'pull_request', 'x-gitea-signature': sign(PAYLOAD) },
    });
    expect((await parseWebhook(get, { secret: SECRET })).payload).toEqual(JSON.parse(PAYLOAD));
  });

  it('refuses a missing, wrong or tampered signature with a 401 WebhookError', async () => {
    const unsigned = await refusal(parseWebhook(delivery(PAYLOAD, { signature: '' }), { secret: SECRET }));
    expect([unsigned.status, unsigned.code]).toEqual([401, 'missing-signature']);
    const wrong = await refusal(
      parseWebhook(delivery(PAYLOAD, { signature: sign(PAYLOAD, 'not-the-secret') }), { secret: SECRET }),
    );
    expect([wrong.status, wrong.code, wrong.name]).toEqual([401, 'bad-signature', 'WebhookError']);
    const tampered = await refusal(
      parseWebhook(delivery(PAYLOAD.replace('closed', 'reopened'), { signature: sign(PAYLOAD) }), { secret: SECRET }),
    );
    expect(tampered.code).toBe('bad-signature');
    // The form's field is what is signed, not the form around it.
    const formSignedOverForm = new Request('http://127.0.0.1/hook', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-gitea-event-type': 'pull_request' },
      body: new URLSearchParams({ payload: PAYLOAD }).toString(),
    });
    formSignedOverForm.headers.set('x-gitea-signature', sign(new URLSearchParams({ payload: PAYLOAD }).toString()));
    expect((await refusal(parseWebhook(formSignedOverForm, { secret: SECRET }))).code).toBe('bad-signature');
  });

  it('reads an unsigned delivery only when told the hook has no secret', async () => {
    const parsed = await parseWebhook(delivery(PAYLOAD, { signature: '' }), { secret: null });
    expect(parsed.known).toBe(true);
    await expect(parseWebhook(delivery(PAYLOAD), { secret: '' })).rejects.toThrow(TypeError);
  });

  it('refuses what is no Gitea delivery or no JSON object, and a delivery past maxBytes', async () => {
    const noType = await refusal(parseWebhook(delivery(PAYLOAD, { type: '' }), { secret: SECRET }));
    expect([noType.status, noType.code]).toEqual([400, 'malformed']);
    for (const body of ['{"action":', '[1,2]', 'null', '\u00ff'])
      expect((await refusal(parseWebhook(delivery(body), { secret: SECRET }))).code).toBe('malformed');
    const large = `{"padding":"${'x'.repeat(2048)}"}`;
    const tooLarge = await refusal(parseWebhook(delivery(large), { secret: SECRET, maxBytes: 1024 }));
    expect([tooLarge.status, tooLarge.code]).toEqual([413, 'too-large']);
    const streamed = new Request('http://127.0.0.1/hook', {
      method: 'POST',
      headers: { 'x-gitea-event-type': 'pull_request', 'x-gitea-signature': sign(large) },
      body: new Blob([large]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect((await refusal(parseWebhook(streamed, { secret: SECRET, maxBytes: 1024 }))).code).toBe('too-large');
  });

  it("knows exactly the event types and actions of openapi.yaml's webhooks", async () => {
    const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));
    const webhooks = listWebhooks(doc);
    expect(webhooks.map((webhook) => webhook.path).sort()).toEqual([...GITEA_EVENT_TYPES].sort());
    for (const webhook of webhooks) {
      const schema = (webhook.operation.requestBody as { content: Record<string, { schema: unknown }> }).content[
        'application/json'
      ]!.schema as { allOf?: { properties?: { action?: { enum: string[] } } }[] };
      const actions = (schema.allOf ?? []).flatMap((part) =>
        isObject(part) ? (part.properties?.action?.enum ?? []) : [],
      );
      // A kind without actions (push, create …) is known by its type alone.
      const bodies = actions.length > 0 ? actions.map((action) => ({ action })) : [{}];
      for (const body of [...bodies, { action: 'never_sent' }]) {
        const parsed = await parseWebhook(delivery(JSON.stringify(body), { type: webhook.path }), { secret: SECRET });
        const known = actions.length === 0 || (body as { action?: string }).action !== 'never_sent';
        expect([webhook.path, body, parsed.known]).toEqual([webhook.path, body, known]);
      }
    }
    const newer = await parseWebhook(delivery('{"action":"created"}', { type: 'discussion', event: 'discussion' }), {
      secret: SECRET,
    });
    expect(newer).toMatchObject({ known: false, type: 'discussion', payload: { action: 'created' } });
  });

  for (const [type, event, example] of [
    ['push', 'push', 'WebhookPushMain'],
    ['issue_comment', 'issue_comment', 'WebhookIssueCommentCreated'],
    ['release', 'release', 'WebhookReleasePublished'],
    ['pull_request_review_approved', 'pull_request_approved', 'WebhookPullRequestReviewApproved'],
  ] as const)
    it(`reads the document's ${type} example as a known ${type} delivery`, async () => {
      const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));
      const examples = (doc.components as { examples: Record<string, { value: unknown }> }).examples;
      const payload = examples[example]!.value;
      const body = JSON.stringify(payload, null, 2);
      const parsed = await parseWebhook(delivery(body, { type, event }), { secret: SECRET });
      expect(parsed).toEqual({
        known: true,
        event,
        type,
        delivery: '6f1c2b9e-2f4d-4c8a-9b7e-1d3a5c7e9f02',
        targetType: 'repository',
        payload,
      });
    });
});

describe('tree-shaking', () => {
  it('leaves the webhook helpers out of an app that only makes a client, and the router out of one that only parses', async () => {
    const { rolldown } = await import('rolldown');
    const built = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
    const bundled = async (names: string): Promise<string> => {
      const dir = await mkdtemp(join(tmpdir(), 'webhook-shake-'));
      try {
        const input = join(dir, 'entry.mjs');
        await writeFile(input, `export { ${names} } from ${JSON.stringify(built)};`);
        const bundle = await rolldown({ input, platform: 'browser', logLevel: 'silent' });
        const { output } = await bundle.generate({ format: 'esm', minify: true });
        await bundle.close();
        return output[0].code;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    const marks = ['x-hub-signature-256', 'WebhookError', 'HMAC'];
    // The router's own texts, which only createWebhookRouter and createNodeMiddleware carry.
    const routerMarks = ['the app failed to handle the delivery', 'not a webhook path'];
    const client = await bundled('createGiteaClient');
    expect([...marks, ...routerMarks].filter((mark) => client.includes(mark))).toEqual([]);
    const helpers = await bundled('parseWebhook');
    expect(marks.filter((mark) => helpers.includes(mark))).toEqual(marks);
    expect(routerMarks.filter((mark) => helpers.includes(mark))).toEqual([]);
    const router = await bundled('createWebhookRouter, createNodeMiddleware');
    expect([...marks, ...routerMarks].filter((mark) => router.includes(mark))).toEqual([...marks, ...routerMarks]);
  });
});
