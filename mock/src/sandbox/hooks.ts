// Which hooks hear what a write of the sandbox causes, handed to the deliveries (webhooks/deliveries.ts)
// as ready deliveries (PrepareWebhooks: the repository's active hooks that take the event, then the
// system hooks of `--webhook`); and events fired on demand (trigger.ts), in the same way.
import {
  createDeliveries,
  type Addressed,
  type DeliveryTransport,
  type WebhookOptions,
} from '../webhooks/deliveries.js';
import type { HookTarget } from '../webhooks/request.js';
import { EVENT_TYPES, eventsOf, watch as watchWrite, type HookEvent, type Watch } from './events.js';
import { eventTemplates, triggeredEvent, type PushHeads, type TriggerRequest } from './trigger.js';
import type { Hook, User, World } from './world.js';

export type Webhooks = ReturnType<typeof createWebhooks>;

/** The review event types a hook takes with `pull_request_review` (models/webhook/webhook.go `HasEvent`). */
const REVIEW_TYPES = new Set([
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
]);

/** Whether a hook's events take `type` (Gitea's `HasEvent`: `issues` and `pull_request` were expanded by repoEditHook). */
function listens(hook: Hook, type: string): boolean {
  return hook.events?.includes(REVIEW_TYPES.has(type) ? 'pull_request_review' : type) === true;
}

/**
 * Whether a hook's branch filter takes `ref` (services/webhook/webhook.go `checkBranchFilter`): none,
 * `*` or `**` takes all; else gobwas' glob without separators (`*`, `?`, `{a,b}`, `[…]`) must match
 * the branch's name or the full reference.
 */
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
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : undefined;
  return (branch !== undefined && glob.test(branch)) || glob.test(ref);
}

/** A repository hook of the world as a delivery needs it. */
const targetOf = (hook: Hook): HookTarget => ({
  id: hook.id,
  type: hook.type ?? 'gitea',
  target: 'repository',
  url: hook.config?.url ?? '',
  contentType: hook.config?.content_type ?? 'json',
  authorization: hook.authorization_header ?? '',
});

/** `budgetBytes`: sandbox-limits.ts' deliveriesBudget; `document`: whose `webhooks:` the triggered events follow. */
export function createWebhooks(
  options: WebhookOptions,
  transport: DeliveryTransport | undefined,
  budgetBytes: number,
  document: Record<string, unknown>,
) {
  const deliveries = createDeliveries(options, transport, budgetBytes);
  const systemHooks: HookTarget[] = (options.systemHooks ?? []).map((url, index) => ({
    id: index + 1,
    type: 'gitea',
    target: 'system',
    url,
    contentType: 'json',
    authorization: '',
  }));
  const templates = eventTemplates(document);
  const pushHeads: PushHeads = new Map();

  /** Each event with the hooks of `world` that take it, then the system hooks. */
  const addressed = (world: World, events: readonly HookEvent[]): Addressed[] =>
    events.map((event) => ({
      payload: event,
      hooks: [
        ...world.hooks
          .filter(
            ({ repo, hook }) =>
              repo === event.repo &&
              hook.active === true &&
              listens(hook, event.type) &&
              (event.ref === undefined || branchFilterTakes(hook.branch_filter, event.ref)),
          )
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
    /** Fires `wanted` in `world` (trigger.ts): its deliveries, logged and pending; throws a Refusal when it cannot. */
    trigger(key: string, world: World, wanted: TriggerRequest, doer: { caller: User; host: string }) {
      const event = triggeredEvent(templates, world, wanted, { ...doer, key, heads: pushHeads });
      return deliveries.fire(key, addressed(world, [event]));
    },
    /** Sends the logged delivery `id` again, to its hook as `world` holds it now. */
    redeliver(key: string, id: string, world?: World) {
      return deliveries.redeliver(key, id, (hookId) => {
        const now = world?.hooks.find(({ hook }) => hook.id === hookId)?.hook;
        return now ? targetOf(now) : undefined;
      });
    },
  };
}
