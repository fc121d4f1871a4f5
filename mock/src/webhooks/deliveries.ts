// The sandbox's webhook deliveries: after a write that stood, each event it caused goes to every
// active hook of the world that listens to its type (PrepareWebhooks: the repository's hooks,
// then the system hooks of `--webhook`), as Gitea sends it (request.ts). The write keeps only the
// payload; the requests are signed, encoded, logged and sent in the turn after the API's answer
// has been written (or when the log is read first), so they never hold it up: a bounded number at
// once, the rest in a queue bounded in count and in bytes, each within its time limit (the
// transport's). Each world keeps a bounded log of its deliveries in memory, read with
// `GET /__sandbox/deliveries` and the world's credential; the log and the queue share one budget
// of the heap. A receiver that is down, slow, failing or not allowed, a request that cannot be
// made, a full queue, is a failed entry there, never an error of the API nor of the process. Where
// there is no transport (the MSW handlers) deliveries are built and logged, not sent.
import type { Rec, World } from '../sandbox/world.js';
import { eventsOf, watch as watchWrite, type Watch } from '../sandbox/events.js';
import { EVENT_TYPES, eventOf, type HookEvent } from '../sandbox/payloads.js';
import { randomUuid, utf8Length } from '../common/bytes.js';
import { MASK, withoutPassword } from './masked.js';
import {
  deliveryRequest,
  portableSigner,
  signaturesOf,
  type HookTarget,
  type OutgoingRequest,
  type Signatures,
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
  /**
   * Each delivery once it is settled: delivered, failed, skipped, or (without a transport) recorded;
   * a copy of its own. A callback that throws or rejects is told on the console, and stops nothing.
   */
  onDelivery?: (delivery: DeliveryRecord) => unknown;
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

/** Which deliveries a reader wants: of this event type (`X-Gitea-Event-Type`) and action, each when given. */
export interface DeliveryFilter {
  type?: string;
  action?: string;
}

/** Whether `record` is one `filter` picks. */
export function picks(filter: DeliveryFilter, record: DeliveryRecord): boolean {
  return (
    (filter.type === undefined || record.type === filter.type) &&
    (filter.action === undefined || record.action === filter.action)
  );
}

/** What a wait for a delivery came to: the settled ones it waited for, none within its time, or too many waiting. */
type Waited = { deliveries: DeliveryRecord[] } | 'timeout' | 'busy';

export interface Webhooks {
  /** What a write of `operationId` may change, copied now; undefined when it cannot fire, or nothing listens. */
  watch(operationId: string, world: World, params: Record<string, string>): Watch | undefined;
  /** The deliveries the watched write caused, prepared now; the returned function logs and sends them once the write stands. */
  prepare(watched: Watch, world: World, context: { key: string; caller: Rec; url: URL }): (() => void) | undefined;
  /** Logs the deliveries of `events`, fired in `world` on demand, and sends them in the next turn: pending, in Gitea's order. */
  fire(key: string, world: World, events: readonly HookEvent[]): DeliveryRecord[];
  /** The log of the world of `key`, oldest first. */
  log(key: string): DeliveryRecord[];
  /** Every world's log together, oldest first. */
  all(): DeliveryRecord[];
  /**
   * Sends the delivery `id` of the log of `key` again, as Gitea's replay does (a new hook task of
   * the same payload): the same payload and signatures under a new delivery id, to the hook as
   * `world` holds it now, logged; undefined when the log holds no such delivery.
   */
  redeliver(key: string, id: string, world?: World): DeliveryRecord | undefined;
  /**
   * The settled deliveries `filter` picks of the log of `key` (or of every world), as soon as there
   * is one: at most `ms` later, or when `signal` aborts ('timeout').
   */
  waitFor(key: string | undefined, filter: DeliveryFilter, ms: number, signal?: AbortSignal): Promise<Waited>;
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

const MiB = 1024 * 1024;

/** Waits for a delivery under way at once, in the process; past it a wait is refused ('busy'). */
export const MAX_WAITS = 256;

const DELIVERED_TYPES = new Set(['gitea', 'gogs']);

/** The review event types a hook takes with `pull_request_review` (models/webhook/webhook.go `HasEvent`). */
const REVIEW_TYPES = new Set([
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
]);

/** Whether a hook's events take `type` (Gitea's `HasEvent`: `issues` and `pull_request` were expanded by repoEditHook). */
function listens(hook: Rec, type: string): boolean {
  const checked = REVIEW_TYPES.has(type) ? 'pull_request_review' : type;
  return Array.isArray(hook.events) && hook.events.includes(checked);
}

/**
 * Whether a hook's branch filter takes `ref` (services/webhook/webhook.go `checkBranchFilter`):
 * none, `*` or `**` takes all; else the glob must match the branch's name or the full reference.
 * The glob is gobwas' without separators: `*` any text, `?` one character, `{a,b}` either, `[…]` a class.
 */
function branchFilterTakes(filter: unknown, ref: string): boolean {
  if (typeof filter !== 'string' || filter === '' || filter === '*' || filter === '**') return true;
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
function targetOf(hook: Rec): HookTarget {
  return {
    id: Number(hook.id),
    type: String(hook.type ?? 'gitea'),
    target: 'repository',
    url: String(hook.config?.url ?? ''),
    contentType: String(hook.config?.content_type ?? 'json'),
    authorization: typeof hook.authorization_header === 'string' ? hook.authorization_header : '',
  };
}

/** The JSON payload of a logged delivery: its body, or its form's field `payload`. */
function payloadOf(record: DeliveryRecord): string {
  return record.headers['Content-Type'] === 'application/x-www-form-urlencoded'
    ? (new URLSearchParams(record.body).get('payload') ?? '')
    : record.body;
}

/** Heap a body's string takes: two bytes a character at most. */
const stringBytes = (body: string): number => 2 * body.length;

/** A record to hand out: its own headers and hook, so an edit changes no other copy nor the log. */
function copyOf(record: DeliveryRecord): DeliveryRecord {
  return { ...record, hook: { ...record.hook }, headers: { ...record.headers } };
}

/** One delivery from the write that caused it to its end. */
interface Delivery {
  seq: number;
  record: DeliveryRecord;
  hook: HookTarget;
  /** The event, until the request is built from it; its signatures are shared by the event's deliveries. */
  event: { event: HookEvent; signatures?: Signatures } | undefined;
  request: OutgoingRequest | undefined;
  /** Heap its body takes, once built: what the log counts for it. */
  bytes: number;
  /** What the queue counts for it while it waits or is sent. */
  queued: number;
}

/**
 * `budgetBytes`: what the log and the deliveries waiting or under way may hold together (sandbox-limits.ts'
 * deliveriesBudget), half each: past the log's half its oldest entries go, past the queue's a delivery
 * is not sent.
 */
export function createWebhooks(
  options: WebhookOptions,
  transport: DeliveryTransport | undefined,
  budgetBytes = Infinity,
): Webhooks {
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
  const logs = new Map<string, Delivery[]>();
  let seq = 0;
  let logBytes = 0;
  /** The deliveries of writes that stood, not yet built: the next turn builds them, or a read of the log first. */
  const unbuilt: { key: string; deliveries: Delivery[] }[] = [];
  /** Built, to be sent by the turn that built them. */
  const toSend: Delivery[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waiting: Delivery[] = [];
  let inFlight = 0;
  let queueBytes = 0;
  const control = new AbortController();
  /** The waits under way, each checking the logs when a delivery is logged or settles. */
  const waits = new Map<() => void, (waited: Waited) => void>();
  let waking = false;

  /** Lets the waits look at the logs once the current task is done. */
  function wake(): void {
    if (waking || waits.size === 0) return;
    waking = true;
    queueMicrotask(() => {
      waking = false;
      for (const check of [...waits.keys()]) check();
    });
  }

  /** A caller's callback that failed, told once per failure, never thrown nor left to reject unhandled. */
  const reportFailure = (record: DeliveryRecord, failure: unknown): void => {
    console.error(
      `gitea-mock: onDelivery failed for delivery ${record.id} (${record.type} ${record.action}):`,
      failure,
    );
  };

  const settle = (delivery: Delivery, outcome: Partial<DeliveryRecord>): void => {
    const { record } = delivery;
    Object.assign(record, outcome);
    wake();
    if (!options.onDelivery) return;
    try {
      const result: unknown = options.onDelivery(copyOf(record));
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
        (result as PromiseLike<unknown>).then(undefined, (failure: unknown) => reportFailure(record, failure));
    } catch (failure) {
      // A callback that throws must not stop the deliveries after it.
      reportFailure(record, failure);
    }
  };

  /** Builds the request of `delivery`: signed once per event, the form escaped, after the write's answer. */
  function build(delivery: Delivery): void {
    const pending = delivery.event!;
    delivery.event = undefined;
    pending.signatures ??= signaturesOf(secret, pending.event.json, sign);
    const request = deliveryRequest(delivery.record.id, pending.event, delivery.hook, pending.signatures);
    const headers = { ...request.headers };
    if (headers.Authorization !== undefined) headers.Authorization = MASK;
    Object.assign(delivery.record, { headers, body: request.body });
    delivery.request = request;
    delivery.bytes = stringBytes(request.body);
  }

  function dropOldest(key: string): void {
    const log = logs.get(key)!;
    logBytes -= log.shift()!.bytes;
    if (log.length === 0) logs.delete(key);
  }

  function append(key: string, delivery: Delivery): void {
    const log = logs.get(key) ?? [];
    logs.delete(key);
    logs.set(key, log);
    log.push(delivery);
    logBytes += delivery.bytes;
    wake();
    let bytes = log.reduce((sum, entry) => sum + entry.record.body.length, 0);
    while (log.length > LOG_ENTRIES || (bytes > LOG_BYTES && log.length > 1)) {
      bytes -= log[0]!.record.body.length;
      dropOldest(key);
    }
    for (const oldest of logs.keys()) {
      if (logs.size <= LOG_WORLDS) break;
      while (logs.has(oldest)) dropOldest(oldest);
    }
    // The worlds written least recently give up their oldest entries first; the newest entry stays.
    for (const oldest of [...logs.keys()]) {
      while (logBytes > budgetBytes / 2 && logs.has(oldest) && !(oldest === key && log.length === 1))
        dropOldest(oldest);
      if (logBytes <= budgetBytes / 2) break;
    }
  }

  /** Builds and logs the deliveries of the writes that stood, in their order. */
  function flush(): void {
    for (let batch = unbuilt.shift(); batch !== undefined; batch = unbuilt.shift()) {
      for (const delivery of batch.deliveries) {
        try {
          build(delivery);
        } catch (failure) {
          delivery.request = undefined;
          settle(delivery, {
            state: 'failed',
            error: `not sent: its request could not be made (${messageOf(failure, delivery)})`,
          });
        }
        append(batch.key, delivery);
        if (delivery.record.state === 'pending') toSend.push(delivery);
      }
    }
  }

  /** What a failure says, without the hook's authorization header. */
  function messageOf(failure: unknown, delivery: Delivery): string {
    const text = failure instanceof Error ? failure.message : String(failure);
    const secretText = delivery.hook.authorization;
    return secretText === '' ? text : text.split(secretText).join(MASK);
  }

  async function send(delivery: Delivery): Promise<void> {
    inFlight++;
    const started = performance.now();
    try {
      const sent = await transport!.send(delivery.request!, control.signal);
      const durationMs = Math.round(performance.now() - started);
      settle(
        delivery,
        'status' in sent
          ? {
              state: sent.status >= 200 && sent.status < 300 ? 'delivered' : 'failed',
              status: sent.status,
              durationMs,
            }
          : { state: 'failed', error: sent.error, durationMs },
      );
    } catch (failure) {
      // Whatever goes wrong, the delivery ends failed and the process goes on.
      settle(delivery, {
        state: 'failed',
        error: `the delivery failed: ${messageOf(failure, delivery)}`,
        durationMs: Math.round(performance.now() - started),
      });
    } finally {
      inFlight--;
      queueBytes -= delivery.queued;
      delivery.request = undefined;
      const next = waiting.shift();
      if (next && !control.signal.aborted) void send(next);
    }
  }

  /** Why `delivery` is not sent, as its settled outcome; undefined when it is sent. */
  function unsent(delivery: Delivery, bytes: number): Partial<DeliveryRecord> | undefined {
    const { type } = delivery.record.hook;
    if (!DELIVERED_TYPES.has(type))
      return {
        state: 'skipped',
        error: `not sent: Gitea converts the payload for ${type} hooks, which gitea-mock does not`,
      };
    if (!transport) return { state: 'recorded' };
    if (inFlight + waiting.length > 0 && queueBytes + bytes > budgetBytes / 2)
      return {
        state: 'failed',
        error: `not sent: the deliveries waiting or under way hold ${Math.round(queueBytes / MiB)} MiB, and this one's ${Math.ceil(bytes / MiB)} MiB would pass their share of the heap (${Math.floor(budgetBytes / 2 / MiB)} MiB; Node's --max-old-space-size gives more)`,
      };
    if (inFlight >= IN_FLIGHT && waiting.length >= WAITING)
      return { state: 'failed', error: `not sent: ${WAITING} deliveries were already waiting` };
    return undefined;
  }

  function dispatch(delivery: Delivery): void {
    // The string, and the bytes written for it while the receiver has not read them.
    const bytes = delivery.bytes + utf8Length(delivery.record.body);
    const outcome = unsent(delivery, bytes);
    if (outcome) {
      settle(delivery, outcome);
      return;
    }
    delivery.queued = bytes;
    queueBytes += bytes;
    if (inFlight < IN_FLIGHT) void send(delivery);
    else waiting.push(delivery);
  }

  /** The turn after the writes' answers: builds, logs and sends what they caused. */
  function drain(): void {
    timer = undefined;
    flush();
    for (let delivery = toSend.shift(); delivery !== undefined; delivery = toSend.shift()) {
      try {
        dispatch(delivery);
      } catch (failure) {
        settle(delivery, { state: 'failed', error: `not sent: ${messageOf(failure, delivery)}` });
      }
    }
  }

  /** The hooks of `world` that take `event`, then the system hooks. */
  function targetsOf(world: World, event: HookEvent): HookTarget[] {
    const own = world.hooks
      .filter(
        (entry) =>
          entry.repo === event.repo &&
          entry.hook.active === true &&
          listens(entry.hook, event.type) &&
          (event.ref === undefined || branchFilterTakes(entry.hook.branch_filter, event.ref)),
      )
      .map(({ hook }) => targetOf(hook));
    return [...own, ...systemHooks];
  }

  const read = (deliveries: Delivery[]): DeliveryRecord[] => deliveries.map((each) => copyOf(each.record));

  /** A pending delivery of each event to each hook that takes it, in Gitea's order. */
  function deliveriesOf(world: World, events: readonly HookEvent[]): Delivery[] {
    const deliveries: Delivery[] = [];
    const at = new Date().toISOString();
    for (const event of events) {
      // One secret for every hook: the payload is signed once, when the first request is built.
      const shared = { event };
      for (const hook of targetsOf(world, event)) {
        const record: DeliveryRecord = {
          id: randomUuid(),
          event: eventOf(event.type),
          type: event.type,
          action: event.action,
          hook: { id: hook.id, type: hook.type, target: hook.target },
          url: withoutPassword(hook.url),
          method: 'POST',
          headers: {},
          body: '',
          state: 'pending',
          at,
        };
        deliveries.push({ seq: seq++, record, hook, event: shared, request: undefined, bytes: 0, queued: 0 });
      }
    }
    return deliveries;
  }

  return {
    watch(operationId, world, params) {
      const heard =
        systemHooks.length > 0 ||
        world.hooks.some(({ hook }) => hook.active === true && EVENT_TYPES.some((type) => listens(hook, type)));
      return heard ? watchWrite(operationId, world, params) : undefined;
    },

    prepare(watched, world, { key, caller, url }) {
      const deliveries = deliveriesOf(world, eventsOf(watched, world, { caller, host: url.hostname }));
      if (deliveries.length === 0) return undefined;
      return () => {
        unbuilt.push({ key, deliveries });
        // After the answer is on its way: a timer runs once the writes of this turn are done.
        timer ??= setTimeout(drain, 0);
      };
    },

    fire(key, world, events) {
      const deliveries = deliveriesOf(world, events);
      unbuilt.push({ key, deliveries });
      // Built and logged now, for the answer to show them; sent in the next turn.
      flush();
      timer ??= setTimeout(drain, 0);
      return read(deliveries);
    },

    log(key) {
      flush();
      return read(logs.get(key) ?? []);
    },

    all() {
      flush();
      return read([...logs.values()].flat().sort((a, b) => a.seq - b.seq));
    },

    redeliver(key, id, world) {
      flush();
      const original = logs.get(key)?.find((each) => each.record.id === id);
      if (!original) return undefined;
      const newId = randomUuid();
      const { record: first } = original;
      // Gitea sends a replayed task with the hook as it is then (`Deliver` reads it by id): a
      // repository hook is read from the world now; a system hook stays as the options set it.
      const now =
        first.hook.target === 'repository'
          ? world?.hooks.find((entry) => Number(entry.hook.id) === first.hook.id)?.hook
          : undefined;
      const hook = now ? targetOf(now) : original.hook;
      // The same payload, so the same signatures (the secret is every hook's): only the id is new.
      const event: HookEvent = { type: first.type, action: first.action, repo: 0, json: payloadOf(first) };
      const signatures = {
        sha256: first.headers['X-Gitea-Signature'] ?? '',
        sha1: (first.headers['X-Hub-Signature'] ?? '').replace(/^sha1=/, ''),
      };
      const request =
        Object.keys(first.headers).length === 0 ? undefined : deliveryRequest(newId, event, hook, signatures);
      const headers = { ...request?.headers };
      if (headers.Authorization !== undefined) headers.Authorization = MASK;
      const record: DeliveryRecord = {
        id: newId,
        event: first.event,
        type: first.type,
        action: first.action,
        hook: { id: hook.id, type: hook.type, target: hook.target },
        url: withoutPassword(hook.url),
        method: 'POST',
        headers,
        body: request?.body ?? '',
        state: 'pending',
        at: new Date().toISOString(),
      };
      const delivery: Delivery = {
        seq: seq++,
        record,
        hook,
        event: undefined,
        request,
        bytes: stringBytes(record.body),
        queued: 0,
      };
      append(key, delivery);
      if (request === undefined)
        settle(delivery, { state: 'failed', error: first.error ?? 'not sent: its request could not be made' });
      else {
        try {
          dispatch(delivery);
        } catch (failure) {
          settle(delivery, { state: 'failed', error: `not sent: ${messageOf(failure, delivery)}` });
        }
      }
      return copyOf(record);
    },

    waitFor(key, filter, ms, signal) {
      flush();
      if (waits.size >= MAX_WAITS) return Promise.resolve('busy');
      return new Promise((resolve) => {
        const settledOnes = (): DeliveryRecord[] =>
          (key === undefined ? [...logs.values()].flat().sort((a, b) => a.seq - b.seq) : (logs.get(key) ?? []))
            .map((each) => each.record)
            .filter((record) => record.state !== 'pending' && picks(filter, record));
        let timer: ReturnType<typeof setTimeout> | undefined;
        const finish = (waited: Waited): void => {
          waits.delete(check);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(waited);
        };
        const check = (): void => {
          const found = settledOnes();
          if (found.length > 0) finish({ deliveries: found.map(copyOf) });
        };
        const onAbort = (): void => finish('timeout');
        timer = setTimeout(onAbort, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
        waits.set(check, finish);
        if (signal?.aborted) onAbort();
        else check();
      });
    },

    forget(key) {
      flush();
      for (const each of key === undefined ? [...logs.keys()] : [key]) while (logs.has(each)) dropOldest(each);
    },

    async close() {
      if (timer !== undefined) clearTimeout(timer);
      flush();
      // What was not sent yet ends now, said so; what is under way ends as its transport stops.
      for (const delivery of [...toSend.splice(0), ...waiting.splice(0)])
        settle(delivery, { state: 'failed', error: 'not sent: the sandbox stopped' });
      control.abort(new Error('the sandbox stopped'));
      for (const finish of [...waits.values()]) finish('timeout');
    },
  };
}
