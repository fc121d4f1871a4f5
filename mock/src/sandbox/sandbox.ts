// The sandbox answer source: each distinct credential gets its own world, seeded from the
// document's examples, and every operation is answered by GiteaBackend (backend.ts) from it, so
// writes show up in later reads. `Prefer` still answers the documented examples. A world is made by
// its credential's first write that changes something, never by a read. Worlds are capped in
// number, in records and in bytes, can be reset, and live in a WorldStore (store.ts): memory, a
// state folder or PostgreSQL, which orders the writes of a world and keeps a world once saved.
//
// A write goes through one guard (`writes`): writes of one world that arrive while a batch of them
// is under way make the next batch, applied to one copy, measured once and saved once; when one of
// them fails, or together they pass the world's budget, the batch is applied again one write at a
// time, so only those at fault are refused. A batch lets the event loop turn between its steps
// (world-json.ts), and batches of different worlds run at once only while their copies and texts
// fit in an eighth of the heap (sandbox-limits.ts). Reads do not wait.
//
// It imports no Node built-in, so the MSW handlers' browser build runs it as it is: what differs
// by runtime comes in a SandboxPlatform.
import { base64Text, utf8Length } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from '../front/answer-source.js';
import { checkAuthorization } from '../front/auth.js';
import { notAllowed } from '../front/errors.js';
import { pathParams, type OperationTable } from '../front/operations.js';
import type { DeliveryFilter, DeliveryRecord, DeliveryTransport, WebhookOptions } from '../webhooks/deliveries.js';
import {
  refusalAnswer,
  GiteaBackend,
  isOperation,
  ownerRedirect,
  READ_ONLY,
  RESET_PATH,
  SandboxError,
  type Call,
  type OperationId,
  type Reply,
} from './backend.js';
import { createWebhooks, deliveriesAnswer, triggerAnswer, type Webhooks } from './hooks.js';
import { MARKDOWN_LIMITS, type MarkdownLimits, type MarkdownRenderer } from './markdown-render.js';
import { deliveriesBudget, inFlightBudget, oversized, worldBudget } from './sandbox-limits.js';
import { StateUnavailable, worldStore, type Backing, type Stored, type WorldStore } from './store.js';
import type { TriggerRequest } from './events.js';
import { seedWorld, type User, type World } from './world.js';
import { copyJson, textBytes, worldText } from './world-json.js';

export interface SandboxOptions {
  /**
   * Keep the worlds in this folder, one file per world: loaded at start, a world saved after each
   * of its writes; or in the PostgreSQL database of this URL (`postgres://…`), shared with every
   * process on it. Opened by the platform's `openStore`.
   */
  state?: string;
  /** Keep the worlds on this backing, opened already (a test's), in place of `state`. */
  store?: Backing;
  /** The document whose schemas the records of `state` must match (default: the package's). */
  document?: string;
  /** Most worlds kept; beyond it the least recently used is dropped (default 100). */
  maxWorlds?: number;
  /** Most records one world may create beyond its seed (default 1,000). */
  maxRecords?: number;
  /** Most bytes one world may hold, as JSON (default 16 MiB, or less: see `worldBudget`). */
  maxWorldBytes?: number;
  /** renderMarkdown's bounds (default MARKDOWN_LIMITS). */
  markdown?: Partial<MarkdownLimits>;
  /** Edits the seed before any world is made from it: every world, and every reset, starts from the edited seed. */
  prepare?: (seed: World) => void;
  /** The webhook deliveries the writes cause (webhooks/deliveries.ts). */
  webhooks?: WebhookOptions;
}

/** What a test can do with the worlds besides sending requests. */
export interface SandboxControl {
  /** Every world back to the seed (with `--state`, their files removed). */
  resetAll(): Promise<void>;
  /** A copy of the world of this `Authorization` header as it is now (the seed, before its first write). */
  worldOf(authorization: string): World;
  /** The webhook deliveries of the world of this `Authorization` header, or of every world, oldest first. */
  deliveries(authorization?: string): DeliveryRecord[];
  /** Fires an event in the world of this `Authorization` header (`POST /__sandbox/trigger`); throws a Refusal (404, 422) for one it cannot fire. */
  trigger(authorization: string, request: TriggerRequest, host: string): Promise<DeliveryRecord[]>;
  /** Sends the logged delivery `id` of the world of this `Authorization` header again; undefined when its log has none. */
  redeliver(authorization: string, id: string): Promise<DeliveryRecord | undefined>;
  /** The settled deliveries `filter` picks, of one world or of all, as soon as there is one (webhooks' waitFor). */
  waitForDeliveries(
    authorization: string | undefined,
    filter: DeliveryFilter,
    ms: number,
  ): ReturnType<Webhooks['waitFor']>;
}

export type Sandbox = AnsweringSource & { control: SandboxControl };

/** What the sandbox takes from the runtime it runs in. */
export interface SandboxPlatform {
  /** renderMarkdown's renderer within these bounds: worker threads in Node (markdown.ts), the calling thread elsewhere (markdown-inline.ts). */
  markdown(limits: MarkdownLimits): MarkdownRenderer;
  /** V8's heap limit in bytes, which bounds the worlds together (heap.ts); undefined where the runtime does not tell it. */
  heapLimit: number | undefined;
  /** What sends webhook deliveries (Node: webhooks/transport-node.ts); without it they are logged, not sent. */
  webhookTransport?: (options: WebhookOptions) => DeliveryTransport;
  /** Opens `state`, a folder or a database (Node: open-state.ts); without it there is none. */
  openStore?: (
    state: string,
    options: { maxWorlds: number; maxWorldBytes: number; document?: string },
  ) => Promise<Backing>;
}

/** Who is calling: the Basic user name when it names a user of the world, else the first user (alice). */
function callerOf(world: World, credential: string): User {
  const [scheme = '', value = ''] = credential.split(' ');
  if (scheme.toLowerCase() === 'basic') {
    const login = base64Text(value)?.split(':')[0]?.toLowerCase();
    const user = world.users.find((candidate) => candidate.login.toLowerCase() === login);
    if (user) return user;
  }
  return world.users[0]!;
}

/** A failure of the store, as the sandbox answers it: 503 and when to try again for one away for now, else 500. */
function storeFailure(failure: unknown, doing: 'save' | 'read'): SandboxError {
  if (failure instanceof StateUnavailable)
    return new SandboxError(failure.status, failure.message, {
      own: true,
      answer: { headers: { 'Retry-After': String(failure.retryAfter) } },
    });
  const cause = doing === 'save' ? ((failure as { code?: string }).code ?? String(failure)) : String(failure);
  return new SandboxError(500, `the sandbox could not ${doing} its state (${cause})`, { own: true });
}

/** What the bounds of one sandbox are. */
interface Bounds {
  seed: World;
  seedBytes: number;
  maxRecords: number;
  maxWorldBytes: number;
  heapLimit: number | undefined;
}

export async function createSandbox(
  table: OperationTable,
  examples: AnsweringSource,
  context: SourceContext,
  platform: SandboxPlatform,
  options: SandboxOptions = {},
): Promise<Sandbox> {
  const seeded = seedWorld(table.operations.map((op) => op.operation));
  // A copy to edit: the seed may share records with the operation table, which servers in one process share.
  const seed = options.prepare ? structuredClone(seeded.seed) : seeded.seed;
  options.prepare?.(seed);
  const seedBytes = utf8Length(JSON.stringify(seed));
  const maxWorlds = options.maxWorlds ?? 100;
  const maxWorldBytes = worldBudget(maxWorlds, options.maxWorldBytes, platform.heapLimit);
  if (maxWorldBytes < seedBytes) {
    throw new Error(
      options.maxWorldBytes === undefined
        ? `--max-worlds ${maxWorlds} is too many: that many worlds of the seed's ${seedBytes} bytes could take more than half of this Node's heap`
        : `--max-world-bytes ${maxWorldBytes} cannot hold the seed world (${seedBytes} bytes)`,
    );
  }
  const open = options.state === undefined || options.store ? undefined : platform.openStore;
  if (options.state !== undefined && !options.store && !open)
    throw new Error('the sandbox keeps worlds in a state folder only where it was opened (Node: answering-node.ts)');
  const renderer = platform.markdown({ ...MARKDOWN_LIMITS, ...options.markdown });
  const backend = new GiteaBackend(seeded.templates, renderer.render);
  const hooks = webhookWiring(table, platform, options.webhooks ?? {});
  // Opened last: nothing after it throws, so what it locks is let go by close().
  const document = options.document === undefined ? {} : { document: options.document };
  const backing = options.store ?? (await open?.(options.state!, { maxWorlds, maxWorldBytes, ...document }));
  const store = worldStore(backing, maxWorlds, seed);
  const bounds: Bounds = {
    seed,
    seedBytes,
    maxRecords: options.maxRecords ?? 1000,
    maxWorldBytes,
    heapLimit: platform.heapLimit,
  };
  const write = writes(store, bounds, context);
  const worldNow = async (key: string): Promise<World> => (await store.read(key))?.world ?? seed;
  const docsUrl = () => context.docsUrl();
  /** The one place a refusal of the model becomes an answer. */
  async function invoke(operationId: OperationId, call: Call): Promise<Reply> {
    try {
      return await backend[operationId](call);
    } catch (error) {
      if (error instanceof SandboxError)
        return { answer: refusalAnswer(error, docsUrl()), changed: !!error.options.changed };
      throw error;
    }
  }

  async function answer(source: SourceRequest): Promise<Answer> {
    const { op, request, preference, credential } = source;
    const operationId = op.operationId as OperationId;
    // A documented example on request, so error screens can be built in the sandbox too.
    const prefers =
      preference.code !== undefined || preference.example !== undefined || preference.dynamic !== undefined;
    if (prefers || !isOperation(operationId)) return examples.answer(source);
    const readOnly = READ_ONLY.has(operationId);
    // A raw upload is stored as its size only, and so is a form's file.
    const tooMuch = readOnly || typeof request.body === 'string' ? undefined : oversized(request.body, source.form);
    if (tooMuch !== undefined) return refusalAnswer(new SandboxError(413, tooMuch, { own: true }), docsUrl());
    const key = keyOf(credential);
    const params = pathParams(op.path, request.url.path);
    const call = (world: World): Call => ({
      world,
      params,
      query: (request.url.query ?? {}) as Record<string, string | string[]>,
      body: request.body,
      ...(source.form ? { form: source.form } : {}),
      url: source.url,
      caller: callerOf(world, credential),
    });
    // An old name of a renamed user leads to the new one, before anything else is looked at.
    const redirect = (world: World) => (op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined);
    if (readOnly) {
      // A read makes no world: a credential without one reads the seed, and drops no other world for it.
      let world: World;
      try {
        world = await worldNow(key);
      } catch (failure) {
        return refusalAnswer(storeFailure(failure, 'read'), docsUrl());
      }
      return redirect(world) ?? (await invoke(operationId, call(world))).answer;
    }
    return write(key, async (world) => {
      const moved = redirect(world);
      if (moved) return { answer: moved, changed: false };
      const watched = hooks.webhooks.watch(operationId, world, params);
      const result = await invoke(operationId, call(world));
      const context = { key, caller: callerOf(world, credential), url: source.url };
      const afterwards = watched && result.changed ? hooks.webhooks.prepare(watched, world, context) : undefined;
      return afterwards ? { ...result, afterwards } : result;
    });
  }

  return {
    strict: true,
    answer,
    async outside(method, url, credential, request) {
      const error = (status: number, message: string) =>
        refusalAnswer(new SandboxError(status, message, { own: true }), docsUrl());
      try {
        const hooked = await hooks.outside(worldNow, error, { method, url, credential, request, docsUrl: docsUrl() });
        if (hooked) return hooked;
      } catch (failure) {
        // The world could not be read (a database away): as for any read.
        return refusalAnswer(storeFailure(failure, 'read'), docsUrl());
      }
      if (url.pathname !== RESET_PATH) return undefined;
      return resetAnswer(
        method,
        credential,
        error,
        async (key) => {
          write.close(key);
          await store.drop(key);
          hooks.webhooks.forget(key);
        },
        docsUrl(),
      );
    },
    control: {
      async resetAll() {
        write.close();
        await store.clear();
        hooks.webhooks.forget();
      },
      worldOf: (authorization) => structuredClone(store.peek(keyOf(authorization))?.world ?? seed),
      ...hooks.control(worldNow),
    },
    async close() {
      // Saves under way finish first; then the folder is free for another process.
      await store.close();
      await hooks.webhooks.close();
      await renderer.close();
    },
  };
}

/** `POST /__sandbox/reset`: back to the seed is no world at all; the next request starts from the seed, and counts then. */
async function resetAnswer(
  method: string,
  credential: string | undefined,
  error: (status: number, message: string) => Answer,
  drop: (key: string) => Promise<void>,
  docsUrl: string,
): Promise<Answer> {
  if (method !== 'POST') return notAllowed(docsUrl, method, RESET_PATH, ['POST']);
  const auth = checkAuthorization(credential, undefined);
  if (!auth.ok) return error(401, auth.message);
  try {
    await drop(keyOf(credential!));
  } catch (failure) {
    return refusalAnswer(storeFailure(failure, 'save'), docsUrl);
  }
  return {
    status: 200,
    type: 'application/json',
    body: { message: "this credential's sandbox world is back to the seed" },
  };
}

/** A write, applied in place to the world as the writes before it left it; `afterwards` is what it causes once it stands (its deliveries). */
type Apply = (world: World) => Promise<Reply & { afterwards?: () => void }>;
type Outcome = { answer: Answer; afterwards?: () => void } | { error: unknown };
interface Job {
  apply: Apply;
  resolve(answer: Answer): void;
  reject(error: unknown): void;
}

/** The longest a batch holds the event loop before it lets other requests through. */
const SLICE_MS = 10;

/** A pause that lets the event loop turn once this task has held it for SLICE_MS, and is free before. */
function pacer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    // setImmediate runs after the I/O waiting (new requests); runtimes without it take a timer.
    await new Promise<void>((resolve) =>
      typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
    );
    since = performance.now();
  };
}

/** Admits tasks while their weights together stay within `capacity`, in arrival order; a task alone is always admitted. */
function admission(capacity: number): (weight: number) => Promise<() => void> {
  let used = 0;
  const waiting: { weight: number; admit: () => void }[] = [];
  const next = (): void => {
    while (waiting.length > 0 && (used === 0 || used + waiting[0]!.weight <= capacity)) {
      const first = waiting.shift()!;
      used += first.weight;
      first.admit();
    }
  };
  return async (weight) => {
    await new Promise<void>((admit) => {
      waiting.push({ weight, admit });
      next();
    });
    return () => {
      used -= weight;
      next();
    };
  };
}

/**
 * The guard of the writes: `write(key, apply)` joins the open batch of `key` or opens the next one,
 * which the store runs in its turn; the batch takes its share of the heap, is applied together or
 * one by one, and answers once its world is saved. `close(key)` ends the open batch (of every key
 * without one), so that later writes come after what is queued now (a reset).
 */
function writes(store: WorldStore, bounds: Bounds, context: SourceContext) {
  const { seed, seedBytes, maxRecords, maxWorldBytes } = bounds;
  // A batch holds a copy of its world and, while it saves, the world's text: about twice its bytes.
  const admit = admission(inFlightBudget(bounds.heapLimit));
  const open = new Map<string, Job[]>();
  const refusal = (status: number, message: string): Answer =>
    refusalAnswer(new SandboxError(status, message, { own: true }), context.docsUrl());

  async function run(key: string, jobs: Job[]): Promise<void> {
    const close = () => open.get(key) === jobs && open.delete(key);
    let release = (): void => {};
    let outcomes: Outcome[];
    try {
      outcomes = await store.write(key, async (now) => {
        // Batches of other worlds may be holding their copies: this one waits while they hold too much.
        release = await admit(2 * (now?.bytes ?? seedBytes));
        close();
        const slot = now ?? { world: seed, bytes: seedBytes };
        const pause = pacer();
        const together = await applyTogether(slot, jobs, pause);
        const { outcomes, next } = together ?? (await applyOneByOne(slot, jobs, pause));
        return { result: outcomes, ...(next ? { next } : {}) };
      });
    } catch (failure) {
      close();
      // Nothing of the batch was kept, and its answers may have read what was not: none stands.
      const answer = refusalAnswer(storeFailure(failure, 'save'), context.docsUrl());
      outcomes = jobs.map(() => ({ answer }));
    } finally {
      release();
    }
    for (const [index, outcome] of outcomes.entries()) {
      if ('error' in outcome) jobs[index]!.reject(outcome.error);
      else {
        jobs[index]!.resolve(outcome.answer);
        outcome.afterwards?.();
      }
    }
  }

  /** The writes applied to one copy, measured once: undefined when one failed or passed the records cap, or all together pass the budget. */
  async function applyTogether(slot: Stored, jobs: Job[], pause: () => Promise<void>) {
    const world = copyJson(slot.world);
    await pause();
    const outcomes: Outcome[] = [];
    let changed = false;
    for (const job of jobs) {
      const created = world.created;
      let result;
      try {
        result = await job.apply(world);
      } catch {
        return undefined;
      }
      if (result.changed && world.created > maxRecords && world.created > created) return undefined;
      changed ||= result.changed;
      // The answer may be a record of the copy, which the next writes change: it is kept as it is now.
      outcomes.push({
        answer: copyJson(result.answer),
        ...(result.afterwards ? { afterwards: result.afterwards } : {}),
      });
      await pause();
    }
    if (!changed) return { outcomes };
    const text = await worldText(world, pause);
    const bytes = textBytes(text);
    if (bytes > maxWorldBytes && bytes > slot.bytes) return undefined;
    return { outcomes, next: { world, bytes, text } };
  }

  /** The writes one at a time, each on a copy of the world as the ones before it left it: only a write at fault is refused. */
  async function applyOneByOne(slot: Stored, jobs: Job[], pause: () => Promise<void>) {
    let { world, bytes } = slot;
    let next: (Stored & { text: string[] }) | undefined;
    const outcomes: Outcome[] = [];
    for (const job of jobs) {
      const copy = copyJson(world);
      try {
        const { answer, changed, afterwards } = await job.apply(copy);
        if (!changed) outcomes.push({ answer });
        else if (copy.created > maxRecords && copy.created > world.created) {
          const why = `this sandbox world is full (${maxRecords} records created); POST ${RESET_PATH} with the same credential starts it afresh`;
          outcomes.push({ answer: refusal(403, why) });
        } else {
          const text = await worldText(copy, pause);
          const size = textBytes(text);
          // A world past its budget may still shrink.
          if (size > maxWorldBytes && size > bytes) {
            const why = `this sandbox world would hold ${size} bytes, more than its ${maxWorldBytes} (--max-world-bytes); POST ${RESET_PATH} with the same credential starts it afresh`;
            outcomes.push({ answer: refusal(413, why) });
          } else {
            ({ world, bytes } = next = { world: copy, bytes: size, text });
            outcomes.push({ answer, ...(afterwards ? { afterwards } : {}) });
          }
        }
      } catch (failure) {
        outcomes.push({ error: failure });
      }
      await pause();
    }
    return { outcomes, ...(next ? { next } : {}) };
  }

  const write = (key: string, apply: Apply): Promise<Answer> =>
    new Promise((resolve, reject) => {
      let batch = open.get(key);
      if (!batch) {
        open.set(key, (batch = []));
        void run(key, batch);
      }
      batch.push({ apply, resolve, reject });
    });
  return Object.assign(write, {
    close(key?: string) {
      if (key === undefined) open.clear();
      else open.delete(key);
    },
  });
}

// ── Webhooks: the deliveries writes cause, the trigger and the deliveries' log endpoints ──

function webhookWiring(table: OperationTable, platform: SandboxPlatform, options: WebhookOptions) {
  const webhooks = createWebhooks(
    options,
    options.send === false ? undefined : platform.webhookTransport?.(options),
    deliveriesBudget(platform.heapLimit),
    table.document,
  );
  type WorldNow = (key: string) => Promise<World>;
  /** Fires `wanted` in the world of `key` as it is now (the seed before its first write): its deliveries, queued. */
  const fire = async (worldNow: WorldNow, key: string, credential: string, wanted: TriggerRequest, host: string) => {
    const world = await worldNow(key);
    return webhooks.trigger(key, world, wanted, { caller: callerOf(world, credential), host });
  };
  return {
    webhooks,
    async outside(
      worldNow: WorldNow,
      error: (status: number, message: string) => Answer,
      request: { method: string; url: URL; credential: string | undefined; request: Request; docsUrl: string },
    ): Promise<Answer | undefined> {
      const { method, url, credential, docsUrl } = request;
      return (
        (await deliveriesAnswer(webhooks, worldNow, error, {
          method,
          url,
          credential,
          docsUrl,
          signal: request.request.signal,
        })) ?? (await triggerAnswer((...args) => fire(worldNow, ...args), error, request))
      );
    },
    control: (worldNow: WorldNow): Omit<SandboxControl, 'resetAll' | 'worldOf'> => ({
      deliveries: (authorization) =>
        authorization === undefined ? webhooks.all() : webhooks.log(keyOf(authorization)),
      trigger: (authorization, request, host) => fire(worldNow, keyOf(authorization), authorization, request, host),
      async redeliver(authorization, id) {
        const key = keyOf(authorization);
        return webhooks.redeliver(key, id, await worldNow(key));
      },
      waitForDeliveries: (authorization, filter, ms) =>
        webhooks.waitFor(authorization === undefined ? undefined : keyOf(authorization), filter, ms),
    }),
  };
}
