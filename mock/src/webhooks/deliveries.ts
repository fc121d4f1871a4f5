// Webhook deliveries as Gitea makes them, from the write that caused them to their end; free of Node built-ins.
import { hmac } from '@noble/hashes/hmac';
import { sha1 } from '@noble/hashes/legacy';
import { sha256 } from '@noble/hashes/sha2';
import { hex, randomUuid, utf8Bytes, utf8Length } from '../common/bytes.js';
import { htmlEscaped } from '../common/go-json.js';
import { GITEA_MASK, withoutPassword } from '../common/redaction.js';

/** `type` is `X-Gitea-Event-Type`. */
export type Payload = { type: string; action: string; json: string };

/**
 * `X-Gitea-Event`: the event as Gitea groups the types (modules/webhook/type.go, `Event`); Forgejo's
 * (the same function @ v11.0/forgejo) has no group for `package`, and sends it empty.
 */
const eventOf = (type: string, forgejo: boolean): string =>
  forgejo && type === 'package'
    ? ''
    : /^issue_(assign|label|milestone)$/.test(type)
      ? 'issues'
      : /^pull_request_(assign|label|milestone|sync|review_request)$/.test(type)
        ? 'pull_request'
        : type === 'pull_request_comment'
          ? 'issue_comment'
          : type.replace(/^pull_request_review_(approved|rejected|comment)$/, 'pull_request_$1');

/** A hook as a delivery needs it: `type` is `gitea`, `gogs`, or one whose payload Gitea converts (slack …); `contentType` `json` or `form`; `authorization` sent when not empty. */
export interface HookTarget {
  id: number;
  type: string;
  target: 'repository' | 'system';
  url: string;
  contentType: string;
  authorization: string;
}

type Signatures = { sha256: string; sha1: string };

type Signer = (secret: string, payload: string) => Signatures;

const portableSigner: Signer = (secret, payload) => {
  const [key, data] = [utf8Bytes(secret), utf8Bytes(payload)];
  return { sha256: hex(hmac(sha256, key, data)), sha1: hex(hmac(sha1, key, data)) };
};

type OutgoingRequest = { method: 'POST'; url: string; headers: Record<string, string>; body: string };

/** The headers that carry the payload's signatures (services/webhook/deliver.go, `Deliver`). */
export const signatureHeaders = ({ sha256: hex256, sha1: hex1 }: Signatures): Record<string, string> => ({
  'X-Gitea-Signature': hex256,
  'X-Gogs-Signature': hex256,
  'X-Hub-Signature-256': `sha256=${hex256}`,
  'X-Hub-Signature': `sha1=${hex1}`,
});

export const DELIVERIES_PATH = '/__sandbox/deliveries';

/** As server.ts documents them; `secret` is every hook's (repoEditHook cannot set one, as on Gitea); `send: false` logs
 * the deliveries without sending them (the MSW handlers). */
export interface WebhookOptions {
  secret?: string;
  systemHooks?: readonly string[];
  allowedHosts?: string;
  timeoutMs?: number;
  onDelivery?: (delivery: DeliveryRecord) => unknown;
  send?: boolean;
  /** Sent as Forgejo sends them: the sandbox of a Forgejo profile. */
  forgejo?: boolean;
  /** Bodies as json-iterator writes them (common/go-json.ts): the servers of a profile before Gitea 1.26, and Forgejo. */
  jsonIterator?: boolean;
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

type Sent = { status: number } | { error: string };

/** Sends one request (transport-node.ts); never rejects. `sign`: the runtime's own HMAC, faster than the portable one. */
export type DeliveryTransport = {
  send(request: OutgoingRequest, signal: AbortSignal): Promise<Sent>;
  sign?: Signer;
};

export type DeliveryFilter = { type?: string; action?: string };

export const picks = (filter: DeliveryFilter, record: DeliveryRecord): boolean =>
  (filter.type === undefined || record.type === filter.type) &&
  (filter.action === undefined || record.action === filter.action);

type Waited = { deliveries: DeliveryRecord[] } | 'timeout' | 'busy';

/** The hooks in Gitea's order. */
export type Addressed = { payload: Payload; hooks: readonly HookTarget[] };

const MiB = 1024 * 1024;
/** Entries and bytes of bodies one world's log keeps, and worlds whose logs are kept: past each, the oldest go. */
const LOG_ENTRIES = 100;
const LOG_BYTES = MiB;
const LOG_WORLDS = 100;
/** Deliveries sent at once, and waiting; past that a delivery fails at once, as Gitea's full queue would hold it back. */
const IN_FLIGHT = 16;
const WAITING = 1000;
/** Waits under way at once, in the process; past it a wait is refused ('busy'). */
export const MAX_WAITS = 256;

/**
 * `event` until its request is built, its signatures shared; `request` makes the request once it is sent (its
 * signatures are made then, or when the log is read: a delivery never sent nor read is never signed); `bytes` its
 * strings' heap in the log, `queued` in the queue.
 */
interface Delivery {
  seq: number;
  record: DeliveryRecord;
  hook: HookTarget;
  event: { payload: Payload; text?: string; signatures?: () => Signatures } | undefined;
  request: (() => OutgoingRequest) | undefined;
  bytes: number;
  queued: number;
}

type Settle = (delivery: Delivery, outcome: Partial<DeliveryRecord>) => void;

/** A record to hand out: an edit changes no other copy nor the log. */
const copyOf = (rec: DeliveryRecord) => ({ ...rec, hook: { ...rec.hook }, headers: { ...rec.headers } });

function messageOf(failure: unknown, hook: HookTarget): string {
  const text = failure instanceof Error ? failure.message : String(failure);
  return hook.authorization === '' ? text : text.split(hook.authorization).join(GITEA_MASK);
}

/** The worlds' logs, in half of `budgetBytes`, the worlds written least recently giving way first; the waits on them. */
function createLog(budgetBytes: number) {
  const logs = new Map<string, Delivery[]>();
  let logBytes = 0;
  const waits = new Map<() => void, (waited: Waited) => void>();
  let waking = false;
  const of = (key: string | undefined): Delivery[] =>
    key === undefined ? [...logs.values()].flat().sort((a, b) => a.seq - b.seq) : (logs.get(key) ?? []);
  const dropOldest = (key: string): void => {
    const log = logs.get(key)!;
    logBytes -= log.shift()!.bytes;
    if (log.length === 0) logs.delete(key);
  };
  const dropAll = (key: string): void => {
    while (logs.has(key)) dropOldest(key);
  };

  function wake(): void {
    if (waking || waits.size === 0) return;
    waking = true;
    queueMicrotask(() => {
      waking = false;
      for (const check of [...waits.keys()]) check();
    });
  }

  function append(key: string, delivery: Delivery): void {
    const log = of(key);
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
  }

  /** As soon as one has settled, at most `ms` later. */
  function waitFor(key: string | undefined, filter: DeliveryFilter, ms: number, signal?: AbortSignal): Promise<Waited> {
    if (waits.size >= MAX_WAITS) return Promise.resolve('busy');
    return new Promise((resolve) => {
      const finish = (waited: Waited): void => {
        waits.delete(check);
        clearTimeout(expiry);
        signal?.removeEventListener('abort', onAbort);
        resolve(waited);
      };
      const check = (): void => {
        const settled = of(key).filter(({ record }) => record.state !== 'pending' && picks(filter, record));
        if (settled.length > 0) finish({ deliveries: settled.map((each) => copyOf(each.record)) });
      };
      const onAbort = (): void => finish('timeout');
      const expiry = setTimeout(onAbort, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      waits.set(check, finish);
      if (signal?.aborted) onAbort();
      else check();
    });
  }

  const forget = (key?: string): void => (key === undefined ? [...logs.keys()] : [key]).forEach(dropAll);
  const close = (): void => {
    for (const finish of [...waits.values()]) finish('timeout');
  };
  return { of, append, wake, waitFor, forget, close };
}

/** Sends IN_FLIGHT deliveries at once and queues WAITING more, their bytes within half of `budgetBytes`. */
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
      const sent = await transport!.send(delivery.request!(), control.signal);
      const ok = 'status' in sent && sent.status >= 200 && sent.status < 300;
      settle(delivery, { state: ok ? 'delivered' : 'failed', ...sent, durationMs: durationMs() });
    } catch (failure) {
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
    dispatch(delivery: Delivery): void {
      // The string, and the bytes written for it while the receiver has not read them.
      const bytes = delivery.bytes + utf8Length(delivery.record.body);
      const outcome = unsent(delivery, bytes);
      if (outcome) return void settle(delivery, outcome);
      delivery.queued = bytes;
      queueBytes += bytes;
      if (inFlight < IN_FLIGHT) void send(delivery);
      else waiting.push(delivery);
    },
    /** Those waiting are handed back; those under way end as their transport stops. */
    stop(): Delivery[] {
      const left = waiting.splice(0);
      control.abort(new Error('the sandbox stopped'));
      return left;
    },
  };
}

/** Forgejo's `substituteRefShortName` (services/webhook/default.go @ v11.0/forgejo, line 145): the payload read into a map and written again, compact, its keys sorted, `ref` short. */
function withShortRef(json: string): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([key, each]) => [key, sorted(each)]),
          )
        : value;
  const payload = JSON.parse(json) as { ref?: unknown };
  if (typeof payload.ref === 'string') payload.ref = payload.ref.replace(/^refs\/(heads|tags)\//, '');
  // encoding/json's Marshal escapes HTML characters too.
  return htmlEscaped(JSON.stringify(sorted(payload)));
}

type Dialect = { forgejo: boolean; jsonIterator: boolean };

/** `make` once, when first called. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** `record.headers`, made when first read; a plain field from then on. */
function headersWhenRead(record: DeliveryRecord, make: () => Record<string, string>): void {
  Object.defineProperty(record, 'headers', {
    enumerable: true,
    configurable: true,
    get() {
      const value = make();
      Object.defineProperty(record, 'headers', { value, enumerable: true, writable: true, configurable: true });
      return value;
    },
  });
}

/** Built once per event, after the write's answer, and signed when first sent or read; the log shows its `Authorization` masked. */
function build(delivery: Delivery, secret: string, sign: Signer, { forgejo, jsonIterator }: Dialect): void {
  const { record, hook } = delivery;
  const pending = delivery.event!;
  const { payload } = pending;
  // The headers keep the event type, not the payload, whose JSON the log does not count.
  const { type } = payload;
  delivery.event = undefined;
  const text = (pending.text ??= jsonIterator ? htmlEscaped(payload.json) : payload.json);
  // Forgejo writes a create or delete event for a `gitea` hook again, for Woodpecker: its own body, its own signatures.
  const rewritten = forgejo && hook.type === 'gitea' && (type === 'create' || type === 'delete');
  const json = rewritten ? withShortRef(text) : text;
  // Empty without a secret, as Gitea sends them for a hook without one.
  const signOf = (body: string) =>
    once((): Signatures => (secret === '' ? { sha256: '', sha1: '' } : sign(secret, body)));
  const signatures = rewritten ? signOf(json) : (pending.signatures ??= signOf(text));
  const form = hook.contentType === 'form';
  const headers = once((): Record<string, string> => {
    const signed = signatures();
    return {
      'Content-Type': form ? 'application/x-www-form-urlencoded' : 'application/json',
      // Forgejo's AddDefaultHeaders (services/webhook/shared/payloader.go @ v11.0/forgejo, line 143) adds four of its own.
      ...(forgejo && {
        'X-Forgejo-Delivery': record.id,
        'X-Forgejo-Event': record.event,
        'X-Forgejo-Event-Type': type,
        'X-Forgejo-Signature': signed.sha256,
      }),
      'X-Gitea-Delivery': record.id,
      'X-Gitea-Event': record.event,
      'X-Gitea-Event-Type': type,
      // Gitea's alone: Forgejo names no installation target.
      ...(!forgejo && { 'X-Gitea-Hook-Installation-Target-Type': hook.target }),
      'X-Gogs-Delivery': record.id,
      'X-Gogs-Event': record.event,
      'X-Gogs-Event-Type': type,
      ...signatureHeaders(signed),
      'X-GitHub-Delivery': record.id,
      'X-GitHub-Event': record.event,
      'X-GitHub-Event-Type': type,
      ...(!forgejo && { 'X-GitHub-Hook-Installation-Target-Type': hook.target }),
      // Go's client names itself so when Gitea sets no User-Agent.
      'User-Agent': 'Go-http-client/1.1',
      ...(hook.authorization === '' ? {} : { Authorization: hook.authorization }),
    };
  });
  // Go's url.Values.Encode is the form encoding but for `*` (escaped) and `~` (kept).
  const body = form
    ? new URLSearchParams({ payload: json }).toString().replace(/\*/g, '%2A').replace(/%7E/g, '~')
    : json;
  delivery.request = () => ({ method: 'POST', url: hook.url, headers: headers(), body });
  headersWhenRead(record, () => ({
    ...headers(),
    ...(hook.authorization === '' ? {} : { Authorization: GITEA_MASK }),
  }));
  record.body = body;
  // Heap a string takes, two bytes a character at most: the body's, and the signed JSON's, which the signing keeps, where it differs.
  delivery.bytes = 2 * (body.length + (json === body ? 0 : json.length));
}

let seq = 0;

function deliveriesOf(events: readonly Addressed[], forgejo: boolean): Delivery[] {
  const at = new Date().toISOString();
  return events.flatMap(({ payload, hooks }) => {
    // One secret for every hook: the payload is signed once, when the first of its requests is sent or read.
    const event = { payload };
    return hooks.map(
      (hook): Delivery => ({
        seq: seq++,
        record: {
          id: randomUuid(),
          event: eventOf(payload.type, forgejo),
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

/** `budgetBytes` (sandbox-limits.ts' deliveriesBudget): what the log and the queue hold together, half each. */
export function createDeliveries(
  { onDelivery, secret = '', forgejo = false, jsonIterator = false }: WebhookOptions,
  transport: DeliveryTransport | undefined,
  budgetBytes = Infinity,
) {
  const sign = transport?.sign ?? portableSigner;
  const dialect = { forgejo, jsonIterator };
  const logs = createLog(budgetBytes);
  const unbuilt: { key: string; deliveries: Delivery[] }[] = [];
  const toSend: Delivery[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const settle: Settle = ({ record }, outcome) => {
    Object.assign(record, outcome);
    logs.wake();
    if (!onDelivery) return;
    const which = `${record.id} (${record.type} ${record.action})`;
    const told = (failure: unknown): void =>
      console.error(`gitea-mock: onDelivery failed for delivery ${which}:`, failure);
    // Called now; what it throws or rejects with is told.
    new Promise((resolve) => resolve(onDelivery(copyOf(record)))).catch(told);
  };
  const sender = createSender(transport, budgetBytes, settle);

  function flush(): void {
    for (let batch = unbuilt.shift(); batch !== undefined; batch = unbuilt.shift()) {
      for (const delivery of batch.deliveries) {
        try {
          build(delivery, secret, sign, dialect);
        } catch (failure) {
          const why = messageOf(failure, delivery.hook);
          settle(delivery, { state: 'failed', error: `not sent: its request could not be made (${why})` });
        }
        logs.append(batch.key, delivery);
        if (delivery.record.state === 'pending') toSend.push(delivery);
      }
    }
  }

  /** Built, logged and sent in the turn after the writes' answers. */
  function queue(key: string, deliveries: Delivery[]): void {
    unbuilt.push({ key, deliveries });
    timer ??= setTimeout(() => {
      timer = undefined;
      flush();
      for (let delivery = toSend.shift(); delivery !== undefined; delivery = toSend.shift()) sender.dispatch(delivery);
    }, 0);
  }

  /** `act`, once what was queued is built and logged. */
  const flushed =
    <A extends unknown[], R>(act: (...args: A) => R) =>
    (...args: A): R => {
      flush();
      return act(...args);
    };
  const read = flushed((key: string | undefined) => logs.of(key).map((each) => copyOf(each.record)));

  return {
    /** Made now; the function returned logs and sends them once the write stands. */
    prepare(key: string, events: readonly Addressed[]): (() => void) | undefined {
      const deliveries = deliveriesOf(events, forgejo);
      return deliveries.length === 0 ? undefined : () => queue(key, deliveries);
    },
    /** Logged now, pending, for the answer to show them. */
    fire(key: string, events: readonly Addressed[]): DeliveryRecord[] {
      const deliveries = deliveriesOf(events, forgejo);
      queue(key, deliveries);
      flush();
      return deliveries.map((each) => copyOf(each.record));
    },
    log: (key: string): DeliveryRecord[] => read(key),
    all: (): DeliveryRecord[] => read(undefined),
    /** Gitea's replay: the same payload and signatures under a new id. */
    redeliver: flushed((key: string, id: string, hookNow?: (id: number) => HookTarget | undefined) => {
      const original = logs.of(key).find((each) => each.record.id === id);
      if (!original) return undefined;
      const { record: first } = original;
      // Gitea's replay reads the hook by id (`Deliver`): a repository hook as it is now, a system hook as set.
      const hook = (first.hook.target === 'repository' ? hookNow?.(first.hook.id) : undefined) ?? original.hook;
      // The same payload (the JSON body, or the form's field), so the same signatures: the secret is every hook's.
      const form = first.headers['Content-Type'] === 'application/x-www-form-urlencoded';
      const json = form ? (new URLSearchParams(first.body).get('payload') ?? '') : first.body;
      const [delivery] = deliveriesOf(
        [{ payload: { type: first.type, action: first.action, json }, hooks: [hook] }],
        forgejo,
      );
      const built = Object.keys(first.headers).length > 0;
      if (built) build(delivery!, secret, sign, dialect);
      logs.append(key, delivery!);
      if (built) sender.dispatch(delivery!);
      else settle(delivery!, { state: 'failed', error: first.error ?? 'not sent: its request could not be made' });
      return copyOf(delivery!.record);
    }),
    waitFor: flushed(logs.waitFor),
    forget: flushed(logs.forget),
    close: flushed(async () => {
      if (timer !== undefined) clearTimeout(timer);
      for (const delivery of [...toSend.splice(0), ...sender.stop()])
        settle(delivery, { state: 'failed', error: 'not sent: the sandbox stopped' });
      logs.close();
    }),
  };
}
