// The sandbox answer source: a world per credential, seeded from the document's examples, made by its first
// write that changes something, capped in records and bytes, kept in a WorldStore (store.ts). `Prefer` still
// answers the examples. Writes go through one guard (`write`); reads do not wait. No Node built-in.
import { base64Text, utf8Length } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import type { JsonObject } from '../contract/document.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from '../front/app.js';
import { pathParams, type OperationTable } from '../front/operations.js';
import type { DeliveryFilter, DeliveryTransport, WebhookOptions } from '../webhooks/deliveries.js';
import { GiteaBackend, isOperation, ownerRedirect, RESET_PATH } from './backend.js';
import { serverRules } from './server-rules.js';
import { refusalAnswer, SandboxError, type Call, type OperationId, type Reply } from './backend.js';
import { createWebhooks, deliveriesAnswer, json, refused, triggerAnswer } from './hooks.js';
import { MARKDOWN_LIMITS, type MarkdownLimits, type MarkdownRenderer } from './markdown-render.js';
import { inFlightBudget, oversized, worldBudget } from './sandbox-limits.js';
import { StateUnavailable, worldStore, type Backing, type OpenOptions, type Stored } from './store.js';
import type { TriggerRequest } from './events.js';
import { seedWorld, type User, type World } from './world.js';
import { copyJson, keepUnchanged, worldBytes, worldText } from './world-json.js';

/** The sandbox's bounds and seed (those both entries take: SandboxChoices, answering.ts), and where the worlds are kept. */
export interface SandboxOptions {
  /** A folder, a file per world, or the PostgreSQL database of a `postgres://…` URL. */
  state?: string;
  /** A backing opened already (a test's), in place of `state`. */
  store?: Backing;
  /** The document whose schemas the records of `state` must match (default: the package's). */
  document?: string;
  /** Most worlds kept; beyond it the least recently used is dropped (default 100). */
  maxWorlds?: number;
  /** Most records one world may create beyond its seed (default 1,000). */
  maxRecords?: number;
  /** Most bytes one world may hold, as JSON (default 16 MiB, or less where the heap is small). */
  maxWorldBytes?: number;
  /** The bounds of markdown rendering (renderMarkdown's). */
  markdown?: Partial<MarkdownLimits>;
  /** Edits the seed before any world is made from it: every world, and every reset, starts from the edited seed. */
  prepare?: (seed: World) => void;
  webhooks?: WebhookOptions;
}

/** What a test can do with the worlds besides sending requests (msw/core.ts says each). */
export type SandboxControl = ReturnType<typeof controlOf>;

export type Sandbox = AnsweringSource & { control: SandboxControl };

export interface SandboxPlatform {
  /** Worker threads in Node (markdown.ts), the calling thread elsewhere (markdown-render.ts). */
  markdown(limits: MarkdownLimits): MarkdownRenderer;
  /** V8's heap limit in bytes (heap.ts), which bounds the worlds together; undefined where the runtime does not tell it. */
  heapLimit: number | undefined;
  /** Sends webhook deliveries (Node: transport-node.ts); without it they are logged, not sent. */
  webhookTransport?: (options: WebhookOptions) => DeliveryTransport;
  /** Opens `state`, a folder or a database (Node: world-store.ts); without it there is none. */
  openStore?: (state: string, options: OpenOptions) => Promise<Backing>;
}

/** Who is calling: the Basic user name when it names a user of the world, else the first user (alice). */
function callerOf(world: World, credential: string): User {
  const [scheme = '', value = ''] = credential.split(' ');
  const login = scheme.toLowerCase() === 'basic' ? base64Text(value)?.split(':')[0]?.toLowerCase() : undefined;
  return world.users.find((candidate) => candidate.login.toLowerCase() === login) ?? world.users[0]!;
}

function storeFailure(failure: unknown, doing: 'save' | 'read', refusal: Parts['refusal']): Answer {
  if (failure instanceof StateUnavailable) return refusal(503, failure.message, { headers: { 'Retry-After': '1' } });
  const cause = doing === 'save' ? ((failure as { code?: string }).code ?? String(failure)) : String(failure);
  return refusal(500, `the sandbox could not ${doing} its state (${cause})`);
}

type Parts = Awaited<ReturnType<typeof openParts>>;

async function openParts(...[table, examples, context, platform, options = {}]: Parameters<typeof createSandbox>) {
  const seeded = seedWorld(
    table.operations.map((op) => op.operation),
    table.document as JsonObject,
  );
  // A copy to edit: the seed may share records with the operation table, which servers in one process share.
  const seed = options.prepare ? structuredClone(seeded.seed) : seeded.seed;
  options.prepare?.(seed);
  const seedBytes = utf8Length(JSON.stringify(seed));
  const { state, maxWorlds = 100, maxRecords = 1000, document } = options;
  const maxWorldBytes = worldBudget(maxWorlds, options.maxWorldBytes, platform.heapLimit, seedBytes);
  const open = options.store || state === undefined ? undefined : platform.openStore;
  if (state !== undefined && !options.store && !open)
    throw new Error('the sandbox keeps worlds in a state folder only where it was opened (Node: answering-node.ts)');
  const renderer = platform.markdown({ ...MARKDOWN_LIMITS, ...options.markdown });
  const rules = serverRules(table.document);
  const inFlight = inFlightBudget(platform.heapLimit);
  return {
    seed,
    seedBytes,
    maxWorldBytes,
    maxRecords,
    // Batches hold a copy and a text of their world, about twice its bytes, within an eighth of the heap together.
    admit: admission(inFlight),
    batches: new Map<string, Job[]>(),
    docsUrl: () => context.docsUrl(),
    refusal: (status: number, message: string, answer?: Omit<Answer, 'status'>): Answer =>
      refusalAnswer(new SandboxError(status, message, { own: true, ...(answer && { answer }) }), context.docsUrl()),
    rules,
    backend: new GiteaBackend(seeded.templates, renderer.render, rules),
    webhooks: createWebhooks(options.webhooks ?? {}, platform.webhookTransport, inFlight, table.document),
    examples,
    renderer,
    // Opened last: nothing after it throws, so what it locks is let go by close().
    store: worldStore(options.store ?? (await open?.(state!, { maxWorlds, maxWorldBytes, document })), maxWorlds, seed),
  };
}

export async function createSandbox(
  table: OperationTable,
  examples: AnsweringSource,
  context: SourceContext,
  platform: SandboxPlatform,
  options: SandboxOptions = {},
): Promise<Sandbox> {
  const parts = await openParts(table, examples, context, platform, options);
  return {
    strict: true,
    answer: (source) => answer(parts, source),
    outside: (...args) => outside(parts, ...args),
    control: controlOf(parts),
    async close() {
      // Saves under way finish first; then the folder is free for another process.
      await parts.store.close();
      await parts.webhooks.close();
      await parts.renderer.close();
    },
  };
}

function controlOf(parts: Parts) {
  const { batches, store, webhooks, seed } = parts;
  return {
    async resetAll(): Promise<void> {
      batches.clear();
      await store.clear();
      webhooks.forget();
    },
    worldOf: (authorization: string): World => structuredClone(store.peek(keyOf(authorization))?.world ?? seed),
    deliveries: (authorization?: string) =>
      authorization === undefined ? webhooks.all() : webhooks.log(keyOf(authorization)),
    /** Throws a Refusal (404, 422) for an event it cannot fire. */
    async trigger(authorization: string, request: TriggerRequest, host: string) {
      const key = keyOf(authorization);
      const world = await worldNow(parts, key);
      return webhooks.trigger(key, world, request, { caller: callerOf(world, authorization), host });
    },
    async redeliver(authorization: string, id: string) {
      const key = keyOf(authorization);
      return webhooks.redeliver(key, id, await worldNow(parts, key));
    },
    waitForDeliveries: (authorization: string | undefined, filter: DeliveryFilter, ms: number, signal?: AbortSignal) =>
      webhooks.waitFor(authorization === undefined ? undefined : keyOf(authorization), filter, ms, signal),
  };
}

const worldNow = async (parts: Parts, key: string) => (await parts.store.read(key))?.world ?? parts.seed;

// The write guard: a write joins its world's open batch or opens the next, which the store runs in its turn (a
// reset ends it). A batch is applied to one copy, measured and saved once; again one write at a time when one fails
// or together they pass the budget, so only those at fault are refused.
const write = (parts: Parts, key: string, apply: Apply): Promise<Answer> =>
  new Promise((resolve, reject) => {
    let batch = parts.batches.get(key);
    if (!batch) {
      parts.batches.set(key, (batch = []));
      void run(parts, key, batch);
    }
    batch.push({ apply, resolve, reject });
  });

async function run(parts: Parts, key: string, jobs: Job[]): Promise<void> {
  const { batches, seed, seedBytes } = parts;
  const close = () => batches.get(key) === jobs && batches.delete(key);
  // Admitted before its turn, as large as its world is here: a store may save it together with other worlds'
  // batches, and none of those may wait for admission meanwhile. Weighed again when it starts, never waiting then.
  const ticket = await parts.admit(2 * (parts.store.peek(key)?.bytes ?? seedBytes));
  let outcomes: Outcome[];
  try {
    outcomes = await parts.store.write(key, async (now) => {
      ticket.weigh(2 * (now?.bytes ?? seedBytes));
      close();
      const slot = now ?? { world: seed, bytes: seedBytes };
      const pause = pacer();
      return (await apply(parts, slot, jobs, pause)) ?? (await apply(parts, slot, jobs, pause, true))!;
    });
  } catch (failure) {
    close();
    // Nothing of the batch was kept, and its answers may have read what was not: none stands.
    const answer = storeFailure(failure, 'save', parts.refusal);
    outcomes = jobs.map(() => ({ answer }));
  } finally {
    ticket.release();
  }
  for (const [index, outcome] of outcomes.entries()) {
    if ('error' in outcome) jobs[index]!.reject(outcome.error);
    else {
      jobs[index]!.resolve(outcome.answer);
      outcome.afterwards?.();
    }
  }
}

/** A batch together, on one copy (undefined when a write fails or passes a bound), or `alone`, each on a copy of the world as those before left it. */
async function apply(parts: Parts, slot: Stored, jobs: Job[], pause: () => Promise<void>, alone = false) {
  const { maxRecords, maxWorldBytes } = parts;
  let { world, bytes } = slot;
  let copy = world;
  let wrote = false;
  let next: (Stored & { text(): Promise<string[]> }) | undefined;
  const outcomes: Outcome[] = [];
  const measure = async () => {
    const measured = copy;
    await keepUnchanged(measured, world, pause);
    const size = await worldBytes(measured, pause);
    if (size > maxWorldBytes && size > bytes) return size;
    // Written only for a store that keeps the text.
    return { world: measured, bytes: size, text: () => worldText(measured, pacer()) };
  };
  for (const job of jobs) {
    if (alone || copy === world) copy = copyJson(world);
    await pause();
    const result = await job.apply(copy).catch((error: unknown) => ({ error }));
    if ('error' in result) {
      if (!alone) return undefined;
      outcomes.push(result);
      continue;
    }
    const { answer, changed, afterwards } = result;
    if (changed && copy.created > maxRecords && copy.created > world.created) {
      if (!alone) return undefined;
      const why = `this sandbox world is full (${maxRecords} records created); POST ${RESET_PATH} with the same credential starts it afresh`;
      outcomes.push({ answer: parts.refusal(403, why) });
      continue;
    }
    if (changed && alone) {
      const measured = await measure();
      if (typeof measured === 'number') {
        const why = `this sandbox world would hold ${measured} bytes, more than its ${maxWorldBytes} (--max-world-bytes); POST ${RESET_PATH} with the same credential starts it afresh`;
        outcomes.push({ answer: parts.refusal(413, why) });
        continue;
      }
      ({ world, bytes } = next = measured);
    }
    wrote ||= changed;
    // The answer may be a record of the copy, which the next writes change: it is kept as it is now.
    outcomes.push({ answer: copyJson(answer), ...(afterwards ? { afterwards } : {}) });
  }
  if (alone || !wrote) return { result: outcomes, ...(next ? { next } : {}) };
  const measured = await measure();
  return typeof measured === 'number' ? undefined : { result: outcomes, next: measured };
}

async function invoke(parts: Parts, operationId: OperationId, call: Call): Promise<Reply> {
  try {
    return await parts.backend[operationId](call);
  } catch (error) {
    if (error instanceof SandboxError)
      return { answer: refusalAnswer(error, parts.docsUrl(), parts.rules), changed: !!error.options.changed };
    throw error;
  }
}

async function answer(parts: Parts, source: SourceRequest): Promise<Answer> {
  const { op, request, preference, credential } = source;
  const operationId = op.operationId as OperationId;
  // A documented example on request, so error screens can be built in the sandbox too.
  const prefers = preference.code !== undefined || preference.example !== undefined || preference.dynamic !== undefined;
  if (prefers || !isOperation(operationId)) return parts.examples.answer(source);
  // Operations that only read the world, the GETs and renderMarkdown: answered from it as it is, without a copy.
  const readOnly = op.method === 'GET' || operationId === 'renderMarkdown';
  // A raw upload is stored as its size only, and so is a form's file.
  const tooMuch = readOnly || typeof request.body === 'string' ? undefined : oversized(request.body, source.form);
  if (tooMuch !== undefined) return parts.refusal(413, tooMuch);
  const key = keyOf(credential);
  const params = pathParams(op.path, request.url.path);
  const call = (world: World): Call => ({
    world,
    params,
    body: request.body,
    ...(source.form ? { form: source.form } : {}),
    url: source.url,
    caller: callerOf(world, credential),
  });
  // An old name of a renamed user leads to the new one, before anything else is looked at.
  const redirect = (world: World) => (op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined);
  if (readOnly) {
    // A read makes no world: a credential without one reads the seed, and drops no other world for it.
    const world = await worldNow(parts, key).catch((failure: unknown) => storeFailure(failure, 'read', parts.refusal));
    if ('status' in world) return world;
    return redirect(world) ?? (await invoke(parts, operationId, call(world))).answer;
  }
  return write(parts, key, async (world) => {
    const moved = redirect(world);
    if (moved) return { answer: moved, changed: false };
    const watched = parts.webhooks.watch(operationId, world, params);
    const result = await invoke(parts, operationId, call(world));
    const context = { key, caller: callerOf(world, credential), url: source.url };
    const afterwards = watched && result.changed ? parts.webhooks.prepare(watched, world, context) : undefined;
    return afterwards ? { ...result, afterwards } : result;
  });
}

async function outside(parts: Parts, method: string, url: URL, credential: string | undefined, request: Request) {
  const asked = { method, url, credential, request, docsUrl: parts.docsUrl() };
  // The endpoints do what a test's control does.
  const control = controlOf(parts);
  try {
    const hooked =
      (await deliveriesAnswer(control, parts.refusal, asked)) ?? (await triggerAnswer(control, parts.refusal, asked));
    if (hooked) return hooked;
  } catch (failure) {
    // The world could not be read (a database away): as for any read.
    return storeFailure(failure, 'read', parts.refusal);
  }
  if (url.pathname !== RESET_PATH) return undefined;
  // Back to the seed is no world at all: the next request starts from the seed, and counts then.
  const refusal = refused(parts.refusal, asked, 'POST');
  if (refusal) return refusal;
  const key = keyOf(credential!);
  try {
    parts.batches.delete(key);
    await parts.store.drop(key);
    parts.webhooks.forget(key);
  } catch (failure) {
    return storeFailure(failure, 'save', parts.refusal);
  }
  return json(200, { message: "this credential's sandbox world is back to the seed" });
}

/** A write, applied in place to the world as the writes before it left it; `afterwards` is what it causes once it stands (its deliveries). */
type Apply = (world: World) => Promise<Reply & { afterwards?: () => void }>;
type Outcome = { answer: Answer; afterwards?: () => void } | { error: unknown };
type Job = { apply: Apply; resolve(answer: Answer): void; reject(error: unknown): void };

/** The longest a batch holds the event loop before it lets other requests through. */
const SLICE_MS = 10;

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
function admission(capacity: number): (weight: number) => Promise<{ weigh(weight: number): void; release(): void }> {
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
    return {
      /** Counts `now` in place of the weight admitted, without waiting: the task has begun. */
      weigh(now) {
        used += now - weight;
        weight = now;
        next();
      },
      release() {
        used -= weight;
        weight = 0;
        next();
      },
    };
  };
}
