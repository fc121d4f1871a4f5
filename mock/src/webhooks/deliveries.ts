// The sandbox's webhook deliveries: after a write that stood, each event it caused goes to every
// active hook of the world that listens to its type (PrepareWebhooks: the repository's hooks,
// then the system hooks of `--webhook`), as Gitea sends it (request.ts). Sending starts after the
// API's answer has been written and never holds it up: a bounded number at once, the rest in a
// bounded queue, each within its time limit (the transport's). Each world keeps a bounded log of
// its deliveries in memory, read with `GET /__sandbox/deliveries` and the world's credential; a
// receiver that is down, slow, failing or not allowed is a failed entry there, never an error of
// the API. Where there is no transport (the MSW handlers) deliveries are built and logged, not sent.
import type { Rec, World } from '../sources/world.js';
import { eventsOf, watch as watchWrite, type Watch } from './events.js';
import { EVENT_TYPES, eventOf, type HookEvent } from './payloads.js';
import {
  deliveryRequest,
  portableSigner,
  signaturesOf,
  type HookTarget,
  type OutgoingRequest,
  type Signer,
} from './request.js';

/** Where the sandbox reads a world's delivery log. */
export const DELIVERIES_PATH = '/__sandbox/deliveries';

export interface WebhookOptions {
  /** The secret of every hook (`--webhook-secret`); repoEditHook cannot set one, as on Gitea. Without it deliveries go unsigned. */
  secret?: string;
  /** System hooks (`--webhook <url>`): each gets every event of every world. */
  systemHooks?: readonly string[];
  /** Hosts deliveries may go to, in the syntax of Gitea's `[webhook] ALLOWED_HOST_LIST` (default `loopback`). */
  allowedHosts?: string;
  /** Longest a delivery may take, in milliseconds (default 5000, Gitea's `DELIVER_TIMEOUT`). */
  timeoutMs?: number;
  /** Each delivery once it is settled: delivered, failed, skipped, or (without a transport) recorded. */
  onDelivery?: (delivery: DeliveryRecord) => void;
  /** `false` logs the deliveries without sending them, where the runtime could (the MSW handlers). */
  send?: boolean;
}

/** How a delivery ended, or that it has not yet. */
type DeliveryState = 'pending' | 'delivered' | 'failed' | 'skipped' | 'recorded';

/** One delivery, as the log and `onDelivery` show it. */
export interface DeliveryRecord {
  /** `X-Gitea-Delivery`. */
  id: string;
  event: string;
  type: string;
  action: string;
  hook: { id: number; type: string; target: HookTarget['target'] };
  url: string;
  method: 'POST';
  /** The request's headers as sent (the signatures included), the hook's `Authorization` masked as Gitea logs it. */
  headers: Record<string, string>;
  /** The request's body as sent: the JSON payload, or the form that holds it. */
  body: string;
  state: DeliveryState;
  /** The receiver's status, once it answered. */
  status?: number;
  /** Why it failed or was skipped. */
  error?: string;
  /** Milliseconds from sending to the end of the answer (or the failure). */
  durationMs?: number;
  /** When it was prepared. */
  at: string;
}

/** What a delivery's sending came to. */
export type Sent = { status: number } | { error: string };

/** Sends one request (Node's in transport-node.ts); rejects never. `sign`: the runtime's own HMAC, faster than the portable one. */
export type DeliveryTransport = {
  send(request: OutgoingRequest, signal: AbortSignal): Promise<Sent>;
  sign?: Signer;
};

export interface Webhooks {
  /** What a write of `operationId` may change, copied now; undefined when it cannot fire, or nothing listens. */
  watch(operationId: string, world: World, params: Record<string, string>): Watch | undefined;
  /** The deliveries the watched write caused, prepared now; the returned function logs and sends them once the write stands. */
  prepare(watched: Watch, world: World, context: { key: string; caller: Rec; url: URL }): (() => void) | undefined;
  /** The log of the world of `key`, oldest first. */
  log(key: string): DeliveryRecord[];
  /** Every world's log together, oldest first. */
  all(): DeliveryRecord[];
  /** Forgets the log of `key`, or of every world. */
  forget(key?: string): void;
  /** Stops what is being sent; what waits is dropped. */
  close(): Promise<void>;
}

/** Entries one world's log keeps, and bytes of request bodies: past either, the oldest go. */
const LOG_ENTRIES = 100;
const LOG_BYTES = 1024 * 1024;
/** Worlds whose logs are kept; the least recently written goes. */
const LOG_WORLDS = 100;
/** Deliveries sent at once, and waiting; past that a delivery fails at once, as Gitea's full queue would hold it back. */
const IN_FLIGHT = 16;
const WAITING = 1000;

const DELIVERED_TYPES = new Set(['gitea', 'gogs']);

/** Whether a hook's events take `type` (Gitea's `HasEvent`: `issues` and `pull_request` were expanded by repoEditHook). */
function listens(hook: Rec, type: string): boolean {
  return Array.isArray(hook.events) && hook.events.includes(type);
}

interface Entry {
  seq: number;
  record: DeliveryRecord;
}

export function createWebhooks(options: WebhookOptions, transport: DeliveryTransport | undefined): Webhooks {
  const secret = options.secret ?? '';
  const sign = transport?.sign ?? portableSigner;
  const systemHooks: HookTarget[] = (options.systemHooks ?? []).map((url, index) => ({
    id: index + 1,
    type: 'gitea',
    target: 'system',
    url,
    contentType: 'json',
    authorization: '',
  }));
  const logs = new Map<string, Entry[]>();
  let seq = 0;
  const waiting: { record: DeliveryRecord; request: OutgoingRequest }[] = [];
  let inFlight = 0;
  const control = new AbortController();

  const settle = (record: DeliveryRecord, outcome: Partial<DeliveryRecord>): void => {
    Object.assign(record, outcome);
    try {
      options.onDelivery?.(record);
    } catch {
      // A callback that throws must not stop the deliveries after it.
    }
  };

  function append(key: string, record: DeliveryRecord): void {
    const log = logs.get(key) ?? [];
    logs.delete(key);
    logs.set(key, log);
    log.push({ seq: seq++, record });
    let bytes = log.reduce((sum, entry) => sum + entry.record.body.length, 0);
    while (log.length > LOG_ENTRIES || (bytes > LOG_BYTES && log.length > 1)) bytes -= log.shift()!.record.body.length;
    for (const oldest of logs.keys()) {
      if (logs.size <= LOG_WORLDS) break;
      logs.delete(oldest);
    }
  }

  async function send(record: DeliveryRecord, request: OutgoingRequest): Promise<void> {
    inFlight++;
    const started = performance.now();
    try {
      const sent = await transport!.send(request, control.signal);
      const durationMs = Math.round(performance.now() - started);
      settle(
        record,
        'status' in sent
          ? {
              state: sent.status >= 200 && sent.status < 300 ? 'delivered' : 'failed',
              status: sent.status,
              durationMs,
            }
          : { state: 'failed', error: sent.error, durationMs },
      );
    } finally {
      inFlight--;
      const next = waiting.shift();
      if (next && !control.signal.aborted) void send(next.record, next.request);
    }
  }

  function dispatch(record: DeliveryRecord, request: OutgoingRequest): void {
    if (!transport) settle(record, { state: 'recorded' });
    else if (inFlight < IN_FLIGHT) void send(record, request);
    else if (waiting.length < WAITING) waiting.push({ record, request });
    else settle(record, { state: 'failed', error: `not sent: ${WAITING} deliveries were already waiting` });
  }

  /** The hooks of `world` that take `event`, then the system hooks. */
  function targetsOf(world: World, event: HookEvent): HookTarget[] {
    const own = world.hooks
      .filter((entry) => entry.repo === event.repo && entry.hook.active === true && listens(entry.hook, event.type))
      .map(({ hook }) => ({
        id: Number(hook.id),
        type: String(hook.type ?? 'gitea'),
        target: 'repository' as const,
        url: String(hook.config?.url ?? ''),
        contentType: String(hook.config?.content_type ?? 'json'),
        authorization: typeof hook.authorization_header === 'string' ? hook.authorization_header : '',
      }));
    return [...own, ...systemHooks];
  }

  return {
    watch(operationId, world, params) {
      const heard =
        systemHooks.length > 0 ||
        world.hooks.some(({ hook }) => hook.active === true && EVENT_TYPES.some((type) => listens(hook, type)));
      return heard ? watchWrite(operationId, world, params) : undefined;
    },

    prepare(watched, world, { key, caller, url }) {
      const prepared: { record: DeliveryRecord; request: OutgoingRequest }[] = [];
      const at = new Date().toISOString();
      for (const event of eventsOf(watched, world, { caller, host: url.hostname })) {
        const hooks = targetsOf(world, event);
        // One secret for every hook: the payload is signed once.
        const signatures = hooks.length === 0 ? undefined : signaturesOf(secret, event.json, sign);
        for (const hook of hooks) {
          const request = deliveryRequest(event, hook, signatures!);
          const headers = { ...request.headers };
          if (headers.Authorization !== undefined) headers.Authorization = '******';
          const record: DeliveryRecord = {
            id: request.headers['X-Gitea-Delivery']!,
            event: eventOf(event.type),
            type: event.type,
            action: event.action,
            hook: { id: hook.id, type: hook.type, target: hook.target },
            url: hook.url,
            method: 'POST',
            headers,
            body: request.body,
            state: 'pending',
            at,
          };
          prepared.push({ record, request });
        }
      }
      if (prepared.length === 0) return undefined;
      return () => {
        for (const { record } of prepared) append(key, record);
        // After the answer is on its way: a timer runs once the writes of this turn are done.
        setTimeout(() => {
          for (const { record, request } of prepared) {
            if (!DELIVERED_TYPES.has(record.hook.type))
              settle(record, {
                state: 'skipped',
                error: `not sent: Gitea converts the payload for ${record.hook.type} hooks, which gitea-mock does not`,
              });
            else dispatch(record, request);
          }
        }, 0);
      };
    },

    log(key) {
      return (logs.get(key) ?? []).map((entry) => entry.record);
    },

    all() {
      return [...logs.values()]
        .flat()
        .sort((a, b) => a.seq - b.seq)
        .map((entry) => entry.record);
    },

    forget(key) {
      if (key === undefined) logs.clear();
      else logs.delete(key);
    },

    async close() {
      waiting.length = 0;
      control.abort(new Error('the sandbox stopped'));
    },
  };
}
