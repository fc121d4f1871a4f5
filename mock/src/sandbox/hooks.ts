// The sandbox's webhooks: the hooks that hear an event (PrepareWebhooks: the repository's active hooks that take it, then `--webhook`'s), and the endpoints of the deliveries and the trigger.
import { readBounded, utf8Text } from '../common/bytes.js';
import { Refusal } from '../common/refusal.js';
import { isForgejo, profileOf } from '../contract/document.js';
import { encodesWithJsonIterator } from '../front/server-profile.js';
import type { Answer } from '../front/app.js';
import { checkAuthorization } from '../front/auth.js';
import { notAllowed } from '../front/errors.js';
import { createDeliveries, DELIVERIES_PATH, MAX_WAITS, picks } from '../webhooks/deliveries.js';
import type { DeliveryFilter, DeliveryTransport, HookTarget, WebhookOptions } from '../webhooks/deliveries.js';
import { EVENT_TYPES, eventsOf, eventTemplates, triggeredEvent, watch as watchWrite } from './events.js';
import type { HookEvent, PushHeads, TriggerRequest, Watch } from './events.js';
import type { SandboxControl } from './sandbox.js';
import type { Hook, User, World } from './world.js';

/** The review event types a hook takes with `pull_request_review` (models/webhook/webhook.go `HasEvent`). */
const REVIEW_TYPE = /^pull_request_review_(approved|rejected|comment)$/;

/** Whether a hook's events take `type` (Gitea's `HasEvent`: `issues` and `pull_request` were expanded by repoEditHook). */
const listens = (hook: Hook, type: string): boolean =>
  hook.events?.includes(REVIEW_TYPE.test(type) ? 'pull_request_review' : type) === true;

/** Whether a hook's branch filter takes `ref` (services/webhook/webhook.go `checkBranchFilter`): none, `*` or `**` takes all; else gobwas' glob without separators (`*`, `?`, `{a,b}`, `[…]`) must match the branch's name or the full reference. */
function branchFilterTakes(filter: string | undefined, ref: string): boolean {
  if (filter === undefined || filter === '' || filter === '*' || filter === '**') return true;
  let pattern = '';
  let depth = 0;
  for (const char of filter) {
    if (char === '*') pattern += '.*';
    else if (char === '?') pattern += '.';
    else if (char === '{') {
      depth++;
      pattern += '(?:';
    } else if (char === '}' && depth > 0) {
      depth--;
      pattern += ')';
    } else if (char === ',' && depth > 0) pattern += '|';
    else pattern += char.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  if (depth !== 0) return false;
  const glob = new RegExp(`^${pattern}$`, 's');
  return (ref.startsWith('refs/heads/') && glob.test(ref.slice('refs/heads/'.length))) || glob.test(ref);
}

const targetOf = (hook: Hook, target: HookTarget['target'] = 'repository'): HookTarget => ({
  id: hook.id,
  type: hook.type ?? 'gitea',
  target,
  url: hook.config?.url ?? '',
  contentType: hook.config?.content_type ?? 'json',
  authorization: hook.authorization_header ?? '',
});

/** `transport`: the platform's, unless `send` is false; `budgetBytes`: sandbox-limits.ts' inFlightBudget; `document`: whose `webhooks:` the triggered events follow. */
export function createWebhooks(
  options: WebhookOptions,
  transport: ((options: WebhookOptions) => DeliveryTransport) | undefined,
  budgetBytes: number,
  document: Record<string, unknown>,
) {
  const profile = profileOf(document);
  const forgejo = isForgejo(profile);
  const sending = options.send === false ? undefined : transport?.(options);
  const deliveries = createDeliveries(
    { ...options, forgejo, jsonIterator: encodesWithJsonIterator(profile) },
    sending,
    budgetBytes,
  );
  const systemHooks = (options.systemHooks ?? []).map((url, i) => targetOf({ id: i + 1, config: { url } }, 'system'));
  const templates = eventTemplates(document);
  const pushHeads: PushHeads = new Map();
  const takes = (hook: Hook, event: HookEvent): boolean =>
    hook.active === true &&
    listens(hook, event.type) &&
    (event.ref === undefined || branchFilterTakes(hook.branch_filter, event.ref));
  const addressed = (world: World, events: readonly HookEvent[]) =>
    events.map((event) => ({
      payload: event,
      hooks: [
        ...world.hooks
          .filter(({ repo, hook }) => repo === event.repo && takes(hook, event))
          .map(({ hook }) => targetOf(hook)),
        ...systemHooks,
      ],
    }));

  return {
    ...deliveries,
    /** What a write of `operationId` may change, copied now; undefined when it cannot fire, or nothing listens. */
    watch(operationId: string, world: World, params: Record<string, string>): Watch | undefined {
      const heard =
        systemHooks.length > 0 ||
        world.hooks.some(({ hook }) => hook.active === true && EVENT_TYPES.some((type) => listens(hook, type)));
      return heard ? watchWrite(operationId, world, params) : undefined;
    },
    /** The deliveries the watched write caused, made now; the function returned logs and sends them once it stands. */
    prepare(watched: Watch, world: World, { key, caller, url }: { key: string; caller: User; url: URL }) {
      return deliveries.prepare(key, addressed(world, eventsOf(watched, world, { caller, host: url.hostname })));
    },
    /** Fires `wanted` in `world`: its deliveries, logged and pending; throws a Refusal when it cannot. */
    trigger(key: string, world: World, wanted: TriggerRequest, doer: { caller: User; host: string }) {
      const event = triggeredEvent(templates, world, wanted, { ...doer, key, heads: pushHeads });
      return deliveries.fire(key, addressed(world, [event]));
    },
    redeliver(key: string, id: string, world?: World) {
      return deliveries.redeliver(key, id, (hookId) => {
        const now = world?.hooks.find(({ hook }) => hook.id === hookId)?.hook;
        return now ? targetOf(now) : undefined;
      });
    },
  };
}

export const TRIGGER_PATH = '/__sandbox/trigger';
export const MAX_WAIT_SECONDS = 60;
const MAX_TRIGGER_BYTES = 64 * 1024;
const REDELIVER = new RegExp(`^${DELIVERIES_PATH}/([^/]+)/redeliver$`);

type ErrorAnswer = (status: number, message: string, answer?: Omit<Answer, 'status'>) => Answer;
/** A request to an endpoint; `docsUrl` for the `url` of error bodies. */
type Asked = { method: string; url: URL; credential: string | undefined; request: Request; docsUrl: string };

/** 405 unless `method` is `allowed`, 401 without a credential; undefined when the request may go on. */
export function refused(error: ErrorAnswer, { method, url, credential, docsUrl }: Asked, allowed: string) {
  if (method !== allowed && !(allowed === 'GET' && method === 'HEAD'))
    return notAllowed(docsUrl, method, url.pathname, [allowed]);
  const auth = checkAuthorization(credential, undefined);
  return auth.ok ? undefined : error(401, auth.message);
}

export const json = (status: number, body: unknown): Answer => ({ status, type: 'application/json', body });

/** The answer of the deliveries endpoints; undefined for a path not theirs. */
export async function deliveriesAnswer(control: SandboxControl, error: ErrorAnswer, asked: Asked) {
  const { url } = asked;
  const redeliver = REDELIVER.exec(url.pathname);
  if (url.pathname !== DELIVERIES_PATH && !redeliver) return undefined;
  const refusal = refused(error, asked, redeliver ? 'POST' : 'GET');
  if (refusal) return refusal;
  const credential = asked.credential!;
  if (redeliver) {
    const id = decodeURIComponent(redeliver[1]!);
    const record = await control.redeliver(credential, id);
    return record ? json(201, record) : error(404, `no delivery ${id} in this credential's log`);
  }
  const query = url.searchParams;
  const filter: DeliveryFilter = {
    ...(query.has('event') && { type: query.get('event')! }),
    ...(query.has('action') && { action: query.get('action')! }),
  };
  const wait = query.get('wait');
  if (wait === null)
    return json(200, { deliveries: control.deliveries(credential).filter((record) => picks(filter, record)) });
  const seconds = /^\d+(\.\d+)?$/.test(wait) ? Number(wait) : Number.NaN;
  if (!(seconds <= MAX_WAIT_SECONDS))
    return error(422, `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}: ${JSON.stringify(wait)}`);
  const waited = await control.waitForDeliveries(credential, filter, seconds * 1000, asked.request.signal);
  if (waited === 'busy')
    return error(503, `${MAX_WAITS} waits for deliveries are under way; try again shortly`, {
      headers: { 'Retry-After': '1' },
    });
  if (waited !== 'timeout') return json(200, waited);
  const what = [filter.type, filter.action].filter(Boolean).join(' ');
  return error(408, `no ${what === '' ? '' : `${what} `}delivery settled within ${wait} s`);
}

function triggerRequest(value: unknown): TriggerRequest | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'the body must be a JSON object: {"event": "push", "repository": "acme/rocket", "action"?: "…"}';
  const { event, action, repository } = value as Record<string, unknown>;
  if (typeof event !== 'string') return 'event must be an event type, such as "push"';
  if (typeof repository !== 'string') return 'repository must be "owner/name", such as "acme/rocket"';
  if (action !== undefined && typeof action !== 'string') return 'action must be a string when given';
  return { event, repository, ...(action !== undefined && { action }) };
}

/** The answer of `POST /__sandbox/trigger`; undefined for another path. */
export async function triggerAnswer(control: SandboxControl, error: ErrorAnswer, asked: Asked) {
  if (asked.url.pathname !== TRIGGER_PATH) return undefined;
  const refusal = refused(error, asked, 'POST');
  if (refusal) return refusal;
  const read = await readBounded(asked.request.body, MAX_TRIGGER_BYTES);
  if (!read.complete) return error(413, `a trigger's body is at most ${MAX_TRIGGER_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Text(read.bytes));
  } catch {
    return error(422, 'the body is not JSON');
  }
  const wanted = triggerRequest(parsed);
  if (typeof wanted === 'string') return error(422, wanted);
  try {
    return json(201, { deliveries: await control.trigger(asked.credential!, wanted, asked.url.hostname) });
  } catch (failure) {
    if (failure instanceof Refusal) return error(failure.status, failure.message);
    throw failure;
  }
}
