// Webhook deliveries from the write that caused them to their end, knowing nothing of the world: the
// sandbox hands over each event's payload with the hooks that take it (sandbox/hooks.ts). They are
// signed, encoded, logged and sent in the turn after the API's answer (or when the log is read
// first), so they never hold it up: a bounded number at once, the rest queued, bounded in count and
// bytes, each within the transport's time. Each world keeps a bounded log (`GET
// /__sandbox/deliveries`), the log and the queue sharing one budget of the heap. A receiver down,
// slow, failing or not allowed, a request that cannot be made, a full queue: a failed entry, never
// an error of the API nor of the process. Without a transport (MSW) they are logged, not sent.
import { randomUuid, utf8Length } from '../common/bytes.js';
import { GITEA_MASK, withoutPassword } from '../common/redaction.js';
import {
  deliveryRequest,
  eventOf,
  portableSigner,
  signaturesOf,
  type HookTarget,
  type OutgoingRequest,
  type Payload,
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
  /** Each delivery once settled, a copy; a callback that throws or rejects is told on the console. */
  onDelivery?: (delivery: DeliveryRecord) => unknown;
  /** `false` logs the deliveries without sending them, where the runtime could (the MSW handlers). */
  send?: boolean;
}

/** One delivery, as the log and `onDelivery` show it; `id` is `X-Gitea-Delivery`. */
export interface DeliveryRecord {
  id: string;
  event: string;
  type: string;
  action: string;
  hook: { id: number; type: string; target: 'repository' | 'system' };
  url: string;
  method: 'POST';
  /** The request as sent, the hook's `Authorization` masked as Gitea logs it. */
  headers: Record<string, string>;
  body: string;
  state: 'pending' | 'delivered' | 'failed' | 'skipped' | 'recorded';
  /** The receiver's status; why it failed or was skipped; milliseconds from sending to the answer's end; when it was prepared. */
  status?: number;
  error?: string;
  durationMs?: number;
  at: string;
}

export type Sent = { status: number } | { error: string };

/** Sends one request (transport-node.ts); never rejects. `sign`: the runtime's own HMAC, faster than the portable one. */
export type DeliveryTransport = {
  send(request: OutgoingRequest, signal: AbortSignal): Promise<Sent>;
  sign?: Signer;
};

/** Which deliveries a reader wants: of this event type and action, each when given. */
export interface DeliveryFilter {
  type?: string;
  action?: string;
}

export const picks = (filter: DeliveryFilter, record: DeliveryRecord): boolean =>
  (filter.type === undefined || record.type === filter.type) &&
  (filter.action === undefined || record.action === filter.action);

/** The settled deliveries a wait waited for, none within its time, or too many waiting. */
type Waited = { deliveries: DeliveryRecord[] } | 'timeout' | 'busy';

/** One event and the hooks that take it, in Gitea's order. */
export interface Addressed {
  payload: Payload;
  hooks: readonly HookTarget[];
}

const MiB = 1024 * 1024;
/** Entries and bytes of bodies one world's log keeps, and worlds whose logs are kept: past each, the oldest go. */
const LOG_ENTRIES = 100;
const LOG_BYTES = MiB;
const LOG_WORLDS = 100;
/** Deliveries sent at once, and waiting; past that a delivery fails at once, as Gitea's full queue would hold it back. */
const IN_FLIGHT = 16;
const WAITING = 1000;
/** Waits for a delivery under way at once, in the process; past it a wait is refused ('busy'). */
export const MAX_WAITS = 256;

/** `event` until its request is built (its signatures shared by the event's deliveries); `bytes` the heap its body takes in the log, `queued` what the queue counts for it. */
interface Delivery {
  seq: number;
  record: DeliveryRecord;
  hook: HookTarget;
  event: { payload: Payload; signatures?: Signatures } | undefined;
  request: OutgoingRequest | undefined;
  bytes: number;
  queued: number;
}

/** A record to hand out: its own headers and hook, so an edit changes no other copy nor the log. */
const copyOf = (record: DeliveryRecord): DeliveryRecord => ({
  ...record,
  hook: { ...record.hook },
  headers: { ...record.headers },
});

/** What a failure says, without the hook's authorization header. */
function messageOf(failure: unknown, hook: HookTarget): string {
  const text = failure instanceof Error ? failure.message : String(failure);
  return hook.authorization === '' ? text : text.split(hook.authorization).join(GITEA_MASK);
}

/** The worlds' logs: each bounded in entries and bytes, and all in half of `budgetBytes`, the worlds written least recently giving way first. */
function createLog(budgetBytes: number, wake: () => void) {
  const logs = new Map<string, Delivery[]>();
  let logBytes = 0;
  const dropOldest = (key: string): void => {
    const log = logs.get(key)!;
    logBytes -= log.shift()!.bytes;
    if (log.length === 0) logs.delete(key);
  };
  const dropAll = (key: string): void => {
    while (logs.has(key)) dropOldest(key);
  };
  return {
    of: (key: string): Delivery[] => logs.get(key) ?? [],
    all: (): Delivery[] => [...logs.values()].flat().sort((a, b) => a.seq - b.seq),
    forget: (key?: string): void => (key === undefined ? [...logs.keys()] : [key]).forEach(dropAll),
    append(key: string, delivery: Delivery): void {
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
      for (const oldest of [...logs.keys()].slice(0, Math.max(0, logs.size - LOG_WORLDS))) dropAll(oldest);
      // The newest entry stays.
      for (const oldest of [...logs.keys()]) {
        while (logBytes > budgetBytes / 2 && logs.has(oldest) && !(oldest === key && log.length === 1))
          dropOldest(oldest);
        if (logBytes <= budgetBytes / 2) break;
      }
    },
  };
}

/** The waits under way, each looking at the logs again once a delivery is logged or settles. */
function createWaits() {
  const waits = new Map<() => void, (waited: Waited) => void>();
  let waking = false;
  return {
    /** Lets the waits look at the logs once the current task is done. */
    wake(): void {
      if (waking || waits.size === 0) return;
      waking = true;
      queueMicrotask(() => {
        waking = false;
        for (const check of [...waits.keys()]) check();
      });
    },
    wait(found: () => DeliveryRecord[], ms: number, signal: AbortSignal | undefined): Promise<Waited> {
      if (waits.size >= MAX_WAITS) return Promise.resolve('busy');
      return new Promise((resolve) => {
        const finish = (waited: Waited): void => {
          waits.delete(check);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(waited);
        };
        const check = (): void => {
          const records = found();
          if (records.length > 0) finish({ deliveries: records.map(copyOf) });
        };
        const onAbort = (): void => finish('timeout');
        const timer = setTimeout(onAbort, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
        waits.set(check, finish);
        if (signal?.aborted) onAbort();
        else check();
      });
    },
    close(): void {
      for (const finish of [...waits.values()]) finish('timeout');
    },
  };
}

type Settle = (delivery: Delivery, outcome: Partial<DeliveryRecord>) => void;

/** The sender: at most IN_FLIGHT deliveries under way, the rest waiting, all within half of `budgetBytes`. */
function createSender(transport: DeliveryTransport | undefined, budgetBytes: number, settle: Settle) {
  const waiting: Delivery[] = [];
  let inFlight = 0;
  let queueBytes = 0;
  const control = new AbortController();

  async function send(delivery: Delivery): Promise<void> {
    inFlight++;
    const started = performance.now();
    const durationMs = (): number => Math.round(performance.now() - started);
    try {
      const sent = await transport!.send(delivery.request!, control.signal);
      const ok = 'status' in sent && sent.status >= 200 && sent.status < 300;
      settle(delivery, { state: ok ? 'delivered' : 'failed', ...sent, durationMs: durationMs() });
    } catch (failure) {
      // Whatever goes wrong, the delivery ends failed and the process goes on.
      const error = `the delivery failed: ${messageOf(failure, delivery.hook)}`;
      settle(delivery, { state: 'failed', error, durationMs: durationMs() });
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
    if (type !== 'gitea' && type !== 'gogs')
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

  return {
    waiting,
    abort: () => control.abort(new Error('the sandbox stopped')),
    dispatch(delivery: Delivery): void {
      try {
        // The string, and the bytes written for it while the receiver has not read them.
        const bytes = delivery.bytes + utf8Length(delivery.record.body);
        const outcome = unsent(delivery, bytes);
        if (outcome) return void settle(delivery, outcome);
        delivery.queued = bytes;
        queueBytes += bytes;
        if (inFlight < IN_FLIGHT) void send(delivery);
        else waiting.push(delivery);
      } catch (failure) {
        settle(delivery, { state: 'failed', error: `not sent: ${messageOf(failure, delivery.hook)}` });
      }
    },
  };
}

/** `budgetBytes` (sandbox-limits.ts' deliveriesBudget): what the log and the queue hold together, half each. */
export function createDeliveries(
  options: WebhookOptions,
  transport: DeliveryTransport | undefined,
  budgetBytes = Infinity,
) {
  const { onDelivery } = options;
  const secret = options.secret ?? '';
  const sign = transport?.sign ?? portableSigner;
  const waits = createWaits();
  const logs = createLog(budgetBytes, waits.wake);
  /** Its outcome into its record, the waits woken, `onDelivery` told (a failure of it told on the console). */
  const settle: Settle = ({ record }, outcome) => {
    Object.assign(record, outcome);
    waits.wake();
    if (!onDelivery) return;
    const told = (failure: unknown): void =>
      console.error(
        `gitea-mock: onDelivery failed for delivery ${record.id} (${record.type} ${record.action}):`,
        failure,
      );
    try {
      const result: unknown = onDelivery(copyOf(record));
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
        (result as PromiseLike<unknown>).then(undefined, told);
    } catch (failure) {
      told(failure);
    }
  };
  const sender = createSender(transport, budgetBytes, settle);
  let seq = 0;
  /** The deliveries of writes that stood, not yet built; then built, to be sent by the turn that built them. */
  const unbuilt: { key: string; deliveries: Delivery[] }[] = [];
  const toSend: Delivery[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** Builds the request of `delivery`, signed once per event, after the write's answer; the log shows its `Authorization` masked. */
  function build(delivery: Delivery): void {
    const pending = delivery.event!;
    delivery.event = undefined;
    pending.signatures ??= signaturesOf(secret, pending.payload.json, sign);
    const request = deliveryRequest(delivery.record.id, pending.payload, delivery.hook, pending.signatures);
    const headers = { ...request.headers };
    if (headers.Authorization !== undefined) headers.Authorization = GITEA_MASK;
    Object.assign(delivery.record, { headers, body: request.body });
    delivery.request = request;
    // Heap a body's string takes: two bytes a character at most.
    delivery.bytes = 2 * request.body.length;
  }

  /** Builds and logs the deliveries of the writes that stood, in their order. */
  function flush(): void {
    for (let batch = unbuilt.shift(); batch !== undefined; batch = unbuilt.shift()) {
      for (const delivery of batch.deliveries) {
        try {
          build(delivery);
        } catch (failure) {
          delivery.request = undefined;
          const why = messageOf(failure, delivery.hook);
          settle(delivery, { state: 'failed', error: `not sent: its request could not be made (${why})` });
        }
        logs.append(batch.key, delivery);
        if (delivery.record.state === 'pending') toSend.push(delivery);
      }
    }
  }

  /** The turn after the writes' answers: builds, logs and sends what they caused. */
  function drain(): void {
    timer = undefined;
    flush();
    for (let delivery = toSend.shift(); delivery !== undefined; delivery = toSend.shift()) sender.dispatch(delivery);
  }

  function queue(key: string, deliveries: Delivery[]): void {
    unbuilt.push({ key, deliveries });
    timer ??= setTimeout(drain, 0);
  }

  function deliveriesOf(events: readonly Addressed[]): Delivery[] {
    const at = new Date().toISOString();
    return events.flatMap(({ payload, hooks }) => {
      // One secret for every hook: the payload is signed once, when the first request is built.
      const event = { payload };
      return hooks.map(
        (hook): Delivery => ({
          seq: seq++,
          record: {
            id: randomUuid(),
            event: eventOf(payload.type),
            type: payload.type,
            action: payload.action,
            hook: { id: hook.id, type: hook.type, target: hook.target },
            url: withoutPassword(hook.url),
            method: 'POST',
            headers: {},
            body: '',
            state: 'pending',
            at,
          },
          hook,
          event,
          request: undefined,
          bytes: 0,
          queued: 0,
        }),
      );
    });
  }

  const read = (deliveries: Delivery[]): DeliveryRecord[] => deliveries.map((each) => copyOf(each.record));

  return {
    /** A pending delivery of each event to each of its hooks, made now; the function returned logs and sends them once the write stands. */
    prepare(key: string, events: readonly Addressed[]): (() => void) | undefined {
      const deliveries = deliveriesOf(events);
      return deliveries.length === 0 ? undefined : () => queue(key, deliveries);
    },
    /** Logs the deliveries of `events` now, pending, for the answer to show them, and sends them in the next turn. */
    fire(key: string, events: readonly Addressed[]): DeliveryRecord[] {
      const deliveries = deliveriesOf(events);
      queue(key, deliveries);
      flush();
      return read(deliveries);
    },
    /** The log of the world of `key`, oldest first. */
    log(key: string): DeliveryRecord[] {
      flush();
      return read(logs.of(key));
    },
    /** Every world's log together, oldest first. */
    all(): DeliveryRecord[] {
      flush();
      return read(logs.all());
    },
    /** Sends the logged delivery `id` again, as Gitea's replay: the same payload and signatures under a new id; undefined when not logged. */
    redeliver(key: string, id: string, hookNow?: (id: number) => HookTarget | undefined): DeliveryRecord | undefined {
      flush();
      const original = logs.of(key).find((each) => each.record.id === id);
      if (!original) return undefined;
      const { record: first } = original;
      // Gitea's replay reads the hook by id (`Deliver`): a repository hook as it is now, a system hook as set.
      const hook = (first.hook.target === 'repository' ? hookNow?.(first.hook.id) : undefined) ?? original.hook;
      // The same payload (the JSON body, or the form's field), so the same signatures: the secret is every hook's.
      const form = first.headers['Content-Type'] === 'application/x-www-form-urlencoded';
      const json = form ? (new URLSearchParams(first.body).get('payload') ?? '') : first.body;
      const [delivery] = deliveriesOf([{ payload: { type: first.type, action: first.action, json }, hooks: [hook] }]);
      const built = Object.keys(first.headers).length > 0;
      if (built) build(delivery!);
      logs.append(key, delivery!);
      if (built) sender.dispatch(delivery!);
      else settle(delivery!, { state: 'failed', error: first.error ?? 'not sent: its request could not be made' });
      return copyOf(delivery!.record);
    },
    /** The settled deliveries `filter` picks of the log of `key` (or of all), as soon as there is one, at most `ms` later. */
    waitFor(key: string | undefined, filter: DeliveryFilter, ms: number, signal?: AbortSignal): Promise<Waited> {
      flush();
      const found = (): DeliveryRecord[] =>
        (key === undefined ? logs.all() : logs.of(key))
          .map((each) => each.record)
          .filter((record) => record.state !== 'pending' && picks(filter, record));
      return waits.wait(found, ms, signal);
    },
    /** Forgets the log of `key`, or of every world. */
    forget(key?: string): void {
      flush();
      logs.forget(key);
    },
    /** Stops what is being sent; what waits is dropped. */
    async close(): Promise<void> {
      if (timer !== undefined) clearTimeout(timer);
      flush();
      // What was not sent yet ends now, said so; what is under way ends as its transport stops.
      for (const delivery of [...toSend.splice(0), ...sender.waiting.splice(0)])
        settle(delivery, { state: 'failed', error: 'not sent: the sandbox stopped' });
      sender.abort();
      waits.close();
    },
  };
}
