// `POST /__sandbox/trigger` with a world's credential: fires one event in that world on demand
// (trigger.ts) and answers 201 with the deliveries it queued, each pending; `{message, url}`
// errors as the API's: 422 for an event type or action the document does not describe or a body
// that is not the request, 404 for a repository the world does not hold, 413 past 64 KiB.
import { checkAuthorization } from '../front/auth.js';
import { keyOf } from '../common/credential-key.js';
import type { Answer } from '../front/answer-source.js';
import type { DeliveryRecord } from '../webhooks/deliveries.js';
import { Refusal } from '../common/refusal.js';
import type { TriggerRequest } from './trigger.js';
import { readBounded, utf8Text } from '../common/bytes.js';

export const TRIGGER_PATH = '/__sandbox/trigger';

/** The most bytes of a trigger's body. */
const MAX_TRIGGER_BYTES = 64 * 1024;

type ErrorAnswer = (status: number, message: string) => Answer;

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
  request: { method: string; url: URL; credential: string | undefined; request: Request },
): Promise<Answer | undefined> {
  if (request.url.pathname !== TRIGGER_PATH) return undefined;
  if (request.method !== 'POST')
    return {
      ...error(405, `${request.method} is not allowed on ${TRIGGER_PATH}; allowed: POST`),
      headers: { Allow: 'POST' },
    };
  const auth = checkAuthorization(request.credential, undefined);
  if (!auth.ok) return error(401, auth.message);
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
