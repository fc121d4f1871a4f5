// The sandbox's endpoints for a world's webhook deliveries, under `/__sandbox/deliveries`, each with
// the world's credential: `GET` reads the log (filtered by `event`, the event type, and `action`),
// and with `wait=<seconds>` answers as soon as a delivery it picks has settled, within 60 s, else
// 408; `POST …/{id}/redeliver` sends a logged delivery again (201, the new delivery).
import { checkAuthorization } from '../front/auth.js';
import { keyOf } from '../common/credential-key.js';
import type { Answer } from '../front/answer-source.js';
import type { World } from './world.js';
import { DELIVERIES_PATH, MAX_WAITS, picks, type DeliveryFilter, type Webhooks } from '../webhooks/deliveries.js';

/** The longest wait for a delivery, in seconds. */
export const MAX_WAIT_SECONDS = 60;

const REDELIVER = new RegExp(`^${DELIVERIES_PATH}/([^/]+)/redeliver$`);

type ErrorAnswer = (status: number, message: string) => Answer;

const notAllowed = (error: ErrorAnswer, method: string, path: string, allowed: string): Answer => ({
  ...error(405, `${method} is not allowed on ${path}; allowed: ${allowed}`),
  headers: { Allow: allowed },
});

/** The answer of the deliveries endpoints to a request to `url`; undefined for a path not theirs. */
export async function deliveriesAnswer(
  webhooks: Webhooks,
  /** The world of a key as it is now, whose hooks a delivery is sent to again. */
  worldOf: (key: string) => Promise<World>,
  error: ErrorAnswer,
  request: { method: string; url: URL; credential: string | undefined; signal: AbortSignal },
): Promise<Answer | undefined> {
  const { method, url, credential } = request;
  const path = url.pathname;
  const redeliver = REDELIVER.exec(path);
  if (path !== DELIVERIES_PATH && !redeliver) return undefined;
  const allowed = redeliver ? 'POST' : 'GET';
  if (method !== allowed && !(allowed === 'GET' && method === 'HEAD')) return notAllowed(error, method, path, allowed);
  const auth = checkAuthorization(credential, undefined);
  if (!auth.ok) return error(401, auth.message);
  const key = keyOf(credential!);

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
