// The sandbox's webhook endpoints, each with a world's credential and `{message, url}` errors as the
// API's. `GET /__sandbox/deliveries` reads the world's log (filtered by `event`, the event type, and
// `action`), with `wait=<seconds>` as soon as a delivery it picks has settled, within 60 s, else 408;
// `POST …/{id}/redeliver` sends a logged delivery again (201). `POST /__sandbox/trigger` fires one
// event (trigger.ts) and answers 201 with its pending deliveries: 422 for an event type or action the
// document does not describe or a body that is not the request, 404 for a repository the world does
// not hold, 413 past 64 KiB.
import { readBounded, utf8Text } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import { Refusal } from '../common/refusal.js';
import type { Answer } from '../front/app.js';
import { checkAuthorization } from '../front/auth.js';
import { notAllowed } from '../front/errors.js';
import { DELIVERIES_PATH, MAX_WAITS, picks, type DeliveryFilter, type DeliveryRecord } from '../webhooks/deliveries.js';
import type { Webhooks } from './hooks.js';
import type { TriggerRequest } from './trigger.js';
import type { World } from './world.js';

export const TRIGGER_PATH = '/__sandbox/trigger';
/** The longest wait for a delivery, in seconds. */
export const MAX_WAIT_SECONDS = 60;
/** The most bytes of a trigger's body. */
const MAX_TRIGGER_BYTES = 64 * 1024;
const REDELIVER = new RegExp(`^${DELIVERIES_PATH}/([^/]+)/redeliver$`);

type ErrorAnswer = (status: number, message: string) => Answer;
interface Asked {
  method: string;
  url: URL;
  credential: string | undefined;
  /** For the `url` of error bodies. */
  docsUrl: string;
}

/** 405 unless `method` is `allowed`, 401 without a credential; undefined when the request may go on. */
function refused(error: ErrorAnswer, { method, url, credential, docsUrl }: Asked, allowed: string): Answer | undefined {
  if (method !== allowed && !(allowed === 'GET' && method === 'HEAD'))
    return notAllowed(docsUrl, method, url.pathname, [allowed]);
  const auth = checkAuthorization(credential, undefined);
  return auth.ok ? undefined : error(401, auth.message);
}

/** The answer of the deliveries endpoints to a request to `url`; undefined for a path not theirs. */
export async function deliveriesAnswer(
  webhooks: Webhooks,
  /** The world of a key as it is now, whose hooks a delivery is sent to again. */
  worldOf: (key: string) => Promise<World>,
  error: ErrorAnswer,
  request: Asked & { signal: AbortSignal },
): Promise<Answer | undefined> {
  const { url } = request;
  const redeliver = REDELIVER.exec(url.pathname);
  if (url.pathname !== DELIVERIES_PATH && !redeliver) return undefined;
  const refusal = refused(error, request, redeliver ? 'POST' : 'GET');
  if (refusal) return refusal;
  const key = keyOf(request.credential!);
  if (redeliver) {
    const id = decodeURIComponent(redeliver[1]!);
    const record = webhooks.redeliver(key, id, await worldOf(key));
    return record
      ? { status: 201, type: 'application/json', body: record }
      : error(404, `no delivery ${id} in this credential's log`);
  }
  const query = url.searchParams;
  const filter: DeliveryFilter = {
    ...(query.has('event') ? { type: query.get('event')! } : {}),
    ...(query.has('action') ? { action: query.get('action')! } : {}),
  };
  const wait = query.get('wait');
  if (wait === null) {
    const deliveries = webhooks.log(key).filter((record) => picks(filter, record));
    return { status: 200, type: 'application/json', body: { deliveries } };
  }
  const seconds = /^\d+(\.\d+)?$/.test(wait) ? Number(wait) : Number.NaN;
  if (!(seconds <= MAX_WAIT_SECONDS))
    return error(422, `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}: ${JSON.stringify(wait)}`);
  const waited = await webhooks.waitFor(key, filter, seconds * 1000, request.signal);
  if (waited === 'busy')
    return {
      ...error(503, `${MAX_WAITS} waits for deliveries are under way; try again shortly`),
      headers: { 'Retry-After': '1' },
    };
  if (waited === 'timeout') {
    const what = [filter.type, filter.action].filter(Boolean).join(' ');
    return error(408, `no ${what === '' ? '' : `${what} `}delivery settled within ${wait} s`);
  }
  return { status: 200, type: 'application/json', body: waited };
}

/** The body of `request`, read to at most MAX_TRIGGER_BYTES; undefined past it. */
async function boundedText(request: Request): Promise<string | undefined> {
  const read = await readBounded(request.body, MAX_TRIGGER_BYTES);
  return read.complete ? utf8Text(read.bytes) : undefined;
}

/** What the body asks for, or why it is not a trigger request. */
function triggerRequest(value: unknown): TriggerRequest | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'the body must be a JSON object: {"event": "push", "repository": "acme/rocket", "action"?: "…"}';
  const { event, action, repository } = value as Record<string, unknown>;
  if (typeof event !== 'string') return 'event must be an event type, such as "push"';
  if (typeof repository !== 'string') return 'repository must be "owner/name", such as "acme/rocket"';
  if (action !== undefined && typeof action !== 'string') return 'action must be a string when given';
  return { event, repository, ...(action === undefined ? {} : { action }) };
}

/** The answer of `POST /__sandbox/trigger`; undefined for another path. */
export async function triggerAnswer(
  fire: (key: string, credential: string, request: TriggerRequest, host: string) => Promise<DeliveryRecord[]>,
  error: ErrorAnswer,
  request: Asked & { request: Request },
): Promise<Answer | undefined> {
  if (request.url.pathname !== TRIGGER_PATH) return undefined;
  const refusal = refused(error, request, 'POST');
  if (refusal) return refusal;
  const text = await boundedText(request.request);
  if (text === undefined) return error(413, `a trigger's body is at most ${MAX_TRIGGER_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return error(422, 'the body is not JSON');
  }
  const wanted = triggerRequest(parsed);
  if (typeof wanted === 'string') return error(422, wanted);
  try {
    const credential = request.credential!;
    const deliveries = await fire(keyOf(credential), credential, wanted, request.url.hostname);
    return { status: 201, type: 'application/json', body: { deliveries } };
  } catch (failure) {
    if (failure instanceof Refusal) return error(failure.status, failure.message);
    throw failure;
  }
}
