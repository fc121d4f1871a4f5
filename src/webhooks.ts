// Reading a webhook delivery in an app: the payload taken from the request as Gitea sends it (a
// JSON body, a form field `payload`, or a `?payload=` query for GET hooks), its signature checked,
// and the result typed by the contract's `webhooks` section, discriminated by the event type.
import type { webhooks } from '../generated/api.js';
import { WebhookError } from './errors.js';
import { bodyBytes, verifyWebhookSignature } from './webhook-signature.js';

/** The name of a webhook of the contract: the event type Gitea sends in `X-Gitea-Event-Type`. */
export type WebhookName = keyof webhooks;

type Post<Name extends WebhookName> = NonNullable<webhooks[Name]['post']>;

/** The JSON payload of a webhook of the contract. */
export type WebhookPayload<Name extends WebhookName> = Post<Name>['requestBody']['content']['application/json'];

/** A delivery the contract describes: `type` tells which, and types `payload`. */
export type WebhookDelivery = {
  [Name in WebhookName]: {
    known: true;
    /** `X-Gitea-Event`: the event as Gitea groups them (`issues` for `issue_assign`). */
    event: Post<Name>['parameters']['header']['X-Gitea-Event'];
    /** `X-Gitea-Event-Type`: the precise event type. */
    type: Name;
    /** `X-Gitea-Delivery`: this delivery's id. */
    delivery: string;
    /**
     * `X-Gitea-Hook-Installation-Target-Type`: `repository`, `organization`, `user`, `system` or
     * `default`; empty from Forgejo, which sends no such header.
     */
    targetType: string;
    payload: WebhookPayload<Name>;
  };
}[WebhookName];

/** A signed delivery of an event type or action the contract does not describe (one a newer server added …). */
export interface OtherWebhookDelivery {
  known: false;
  event: string;
  type: string;
  delivery: string;
  targetType: string;
  /** The parsed JSON, unchecked. */
  payload: unknown;
}

/** The actions a webhook's payload carries; `never` for the kinds that have none (push, create …). */
type ActionOf<Name extends WebhookName> = WebhookPayload<Name> extends { action: infer Action } ? Action : never;

/**
 * The actions each webhook of the contract carries, `null` for the kinds whose payload has no
 * action, which are known by their event type alone; test/client/webhooks.test.ts holds it to
 * openapi.yaml.
 */
const ACTIONS = {
  create: null,
  delete: null,
  fork: null,
  issue_assign: ['assigned', 'unassigned'],
  issue_comment: ['created', 'deleted', 'edited'],
  issue_label: ['label_cleared', 'label_updated'],
  issue_milestone: ['demilestoned', 'milestoned'],
  issues: ['closed', 'deleted', 'edited', 'opened', 'reopened'],
  package: ['created', 'deleted'],
  pull_request: ['closed', 'deleted', 'edited', 'opened', 'reopened'],
  pull_request_assign: ['assigned', 'unassigned'],
  pull_request_comment: ['created', 'deleted', 'edited'],
  pull_request_label: ['label_cleared', 'label_updated'],
  pull_request_milestone: ['demilestoned', 'milestoned'],
  pull_request_review_approved: ['reviewed'],
  pull_request_review_comment: ['reviewed'],
  pull_request_review_rejected: ['reviewed'],
  pull_request_review_request: ['review_request_removed', 'review_requested'],
  pull_request_sync: ['synchronized'],
  push: null,
  release: ['deleted', 'published', 'updated'],
  repository: ['created', 'deleted'],
  status: null,
  wiki: ['created', 'deleted', 'edited'],
  workflow_job: ['completed', 'in_progress', 'queued', 'waiting'],
  workflow_run: ['completed', 'in_progress', 'requested'],
} as const satisfies { [Name in WebhookName]: [ActionOf<Name>] extends [never] ? null : readonly ActionOf<Name>[] };

export interface ParseWebhookOptions {
  /**
   * The hook's secret. Deliveries without a valid signature are refused with a `WebhookError`.
   * `null` reads a hook that has no secret, whose deliveries Gitea sends unsigned: anyone who can
   * reach the app could have sent them.
   */
  secret: string | null;
  /** Most bytes of the request read (default 10 MiB); a larger delivery is a `WebhookError` (413). */
  maxBytes?: number;
}

/** The body, read up to `limit` bytes. */
async function readBody(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > limit) throw new WebhookError(413, 'too-large', `the delivery is larger than ${limit} bytes`);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new WebhookError(413, 'too-large', `the delivery is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The JSON payload as Gitea sent it: the body, the form field `payload`, or the `payload` query of a GET hook. */
async function payloadOf(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  if (request.method === 'GET') {
    const text = new URL(request.url).searchParams.get('payload');
    if (text === null) throw new WebhookError(400, 'malformed', 'the delivery has no payload query parameter');
    return bodyBytes(text);
  }
  const body = await readBody(request, limit);
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return body;
  const text = new URLSearchParams(new TextDecoder().decode(body)).get('payload');
  if (text === null) throw new WebhookError(400, 'malformed', 'the form delivery has no payload field');
  return bodyBytes(text);
}

/**
 * Reads a webhook delivery from `request` (a Fetch API `Request`, as Node's and Deno's servers,
 * Bun, edge runtimes and service workers hand it over): checks the signature with `secret`
 * (`X-Hub-Signature-256`, else `X-Gitea-Signature`) and parses the payload. `known` is true for a
 * delivery the contract describes, whose `type` then types `payload`; any other signed delivery
 * comes back with `known: false` and its payload unchecked. A missing or wrong signature, a
 * payload that is not a JSON object, and a delivery without `X-Gitea-Event-Type` are refused
 * with a `WebhookError` that carries the status to answer.
 */
export async function parseWebhook(
  request: Request,
  options: ParseWebhookOptions,
): Promise<WebhookDelivery | OtherWebhookDelivery> {
  const { secret, maxBytes = 10 * 1024 * 1024 } = options;
  if (secret !== null && (typeof secret !== 'string' || secret === ''))
    throw new TypeError("parseWebhook needs the hook's secret, or null for a hook without one");
  const header = (name: string): string => request.headers.get(`x-gitea-${name}`) ?? '';
  const type = header('event-type') || (request.headers.get('x-gogs-event-type') ?? '');
  if (type === '')
    throw new WebhookError(400, 'malformed', 'the request has no X-Gitea-Event-Type: it is no Gitea delivery');
  const bytes = await payloadOf(request, maxBytes);
  if (secret !== null) {
    const signature = request.headers.get('x-hub-signature-256') || header('signature');
    if (signature === '' || signature === 'sha256=')
      throw new WebhookError(401, 'missing-signature', 'the delivery is not signed: does the hook have the secret?');
    if (!(await verifyWebhookSignature(secret, bytes, signature)))
      throw new WebhookError(401, 'bad-signature', 'the signature does not match the payload and the secret');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new WebhookError(400, 'malformed', 'the payload is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new WebhookError(400, 'malformed', 'the payload is not a JSON object');
  const action = (payload as { action?: unknown }).action;
  const actions: readonly string[] | null | undefined = Object.hasOwn(ACTIONS, type)
    ? ACTIONS[type as WebhookName]
    : undefined;
  const known = actions === null || (typeof action === 'string' && actions !== undefined && actions.includes(action));
  return {
    known,
    event: header('event'),
    type,
    delivery: header('delivery'),
    targetType: header('hook-installation-target-type'),
    payload,
  } as WebhookDelivery | OtherWebhookDelivery;
}
