// The sandbox answer source: each distinct credential gets its own world, seeded from the
// document's examples, and every operation is answered from it (world-ops.ts), so writes show up
// in later reads. `Prefer` still answers the documented examples. A world is made by its
// credential's first write that changes something, never by a read. Worlds are capped in number
// (the least recently used is dropped), in records and in bytes, can be reset, and can live in a
// state folder (world-store.ts) or in PostgreSQL (world-postgres.ts).
//
// A write is applied to a copy of its world; the copy replaces the world only once it is within
// the limits and, with a state folder, saved. So a refused or unsaved write changes nothing, and a
// read never sees what is not on disk. Writes to one world go one at a time, in the order they
// came; those that arrive while a batch is under way make the next batch, applied to one copy,
// measured once and saved once, so a batch costs about one write whatever its number of writes.
// When one of them fails, or together they pass the world's budget, the batch is applied again
// one write at a time, so only those at fault are refused. A batch lets the event loop turn
// between its steps (world-json.ts), and batches of different worlds run at once only while their
// copies and texts fit in an eighth of the heap (sandbox-limits.ts). Reads do not wait.
//
// With PostgreSQL, other processes share the worlds (world-shared.ts): the worlds held here are
// copies, each with its stored version. A read first asks the database whether its world is still
// that version (and takes the stored one when not), and a batch of writes runs while holding its
// world across processes, applied to the world as stored then; it is kept here once committed.
//
// It imports no Node built-in, so the MSW handlers' browser build runs it as it is: what differs
// by runtime comes in a SandboxPlatform (renderMarkdown's renderer, the heap's size; the state folder is
// opened by the Node side and handed over as `store`).
import { base64Text, utf8Length } from '../common/bytes.js';
import { keyOf } from '../common/credential-key.js';
import { checkAuthorization } from '../front/auth.js';
import { apiError } from '../front/errors.js';
import { pathParams, type OperationTable } from '../front/operations.js';
import { MARKDOWN_LIMITS, type MarkdownLimits, type MarkdownRenderer } from './markdown-inline.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from '../front/answer-source.js';
import { deliveriesBudget, inFlightBudget, oversized, worldBudget } from './sandbox-limits.js';
import { seedWorld, type World } from './world.js';
import { copyJson, textBytes, worldText } from './world-json.js';
import { handlerFor, ownerRedirect, READ_ONLY, RESET_PATH } from './world-ops.js';
import type { StateStore } from './world-store.js';
import { StateUnavailable, type Look } from './world-shared.js';
import { deliveriesAnswer, triggerAnswer } from './hook-endpoints.js';
import { createWebhooks, type Webhooks } from './hooks.js';
import type { TriggerRequest } from './trigger.js';
import type { DeliveryFilter, DeliveryRecord, DeliveryTransport, WebhookOptions } from '../webhooks/deliveries.js';

export interface SandboxOptions {
  /**
   * Keep the worlds in this folder, one file per world: loaded at start, a world saved after each
   * of its writes; or in the PostgreSQL database of this URL (`postgres://…`), shared with every
   * process on it.
   */
  state?: string;
  /** The store of `state`, folder or database, opened (by the CLI before anything else, or by answering-node.ts): the sandbox keeps its worlds there. */
  store?: StateStore;
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
  /**
   * Fires an event in the world of this `Authorization` header (`POST /__sandbox/trigger`): its
   * deliveries, queued; throws a Refusal (404, 422) for an event, action or repository it cannot fire.
   */
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
}

/** Who is calling: the Basic user name when it names a user of the world, else the first user (alice). */
function callerOf(world: World, credential: string): World['users'][number] {
  const [scheme = '', value = ''] = credential.split(' ');
  if (scheme.toLowerCase() === 'basic') {
    const login = base64Text(value)?.split(':')[0]?.toLowerCase();
    const user = world.users.find((candidate) => String(candidate.login).toLowerCase() === login);
    if (user) return user;
  }
  return world.users[0]!;
}

/** A write waiting for its turn: applied, in place, to the world as the writes before it left it. */
interface Job {
  /**
   * Its answer, and whether it changed the world; one that did not leaves the world as it was.
   * `afterwards`: what the write causes once it stands (its webhook deliveries).
   */
  apply(world: World): Promise<{ answer: Answer; changed: boolean; afterwards?: () => void }>;
  resolve(answer: Answer): void;
  reject(error: unknown): void;
}

type Outcome = { answer: Answer; afterwards?: () => void } | { error: unknown };

/** What a batch made: each write's outcome, and the world after them, with its text, when one changed it. */
interface Applied {
  outcomes: Outcome[];
  next?: { world: World; bytes: number; text: string[] };
}

interface Slot {
  world: World;
  /** Its size as JSON, what the budget counts. */
  bytes: number;
  /** Whether it has a file in the state folder (loaded from one, or saved). */
  onDisk?: boolean;
  /** Its version in a shared store (PostgreSQL). */
  version?: number;
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
    let done = false;
    return () => {
      if (done) return;
      done = true;
      used -= weight;
      next();
    };
  };
}

export async function createSandbox(
  table: OperationTable,
  examples: AnsweringSource,
  context: SourceContext,
  platform: SandboxPlatform,
  options: SandboxOptions = {},
): Promise<Sandbox> {
  const seeded = seedWorld(table.operations.map((op) => op.operation));
  const { templates } = seeded;
  // A copy to edit: the seed may share records with the operation table, which servers in one process share.
  const seed = options.prepare ? structuredClone(seeded.seed) : seeded.seed;
  options.prepare?.(seed);
  const seedBytes = utf8Length(JSON.stringify(seed));
  const maxWorlds = options.maxWorlds ?? 100;
  const maxRecords = options.maxRecords ?? 1000;
  const maxWorldBytes = worldBudget(maxWorlds, options.maxWorldBytes, platform.heapLimit);
  if (maxWorldBytes < seedBytes) {
    throw new Error(
      options.maxWorldBytes === undefined
        ? `--max-worlds ${maxWorlds} is too many: that many worlds of the seed's ${seedBytes} bytes could take more than half of this Node's heap`
        : `--max-world-bytes ${maxWorldBytes} cannot hold the seed world (${seedBytes} bytes)`,
    );
  }
  const store = options.store;
  const shared = store?.shared;
  if (options.state !== undefined && store === undefined)
    throw new Error('the sandbox keeps worlds in a state folder only where it was opened (Node: answering-node.ts)');
  const renderer = platform.markdown({ ...MARKDOWN_LIMITS, ...options.markdown });
  const webhookOptions = options.webhooks ?? {};
  const webhooks = createWebhooks(
    webhookOptions,
    webhookOptions.send === false ? undefined : platform.webhookTransport?.(webhookOptions),
    deliveriesBudget(platform.heapLimit),
    table.document,
  );
  // A batch holds a copy of its world and, while it saves, the world's text: about twice its bytes.
  const admit = admission(inFlightBudget(platform.heapLimit));

  // Insertion order is recency: a world used is moved to the end, the first is dropped first.
  const worlds = new Map<string, Slot>(
    [...(store?.worlds ?? [])].map(([key, stored]) => [key, { ...stored, onDisk: true }]),
  );

  // One task at a time per world key (its writes, reset and removal), in arrival order.
  const tails = new Map<string, Promise<unknown>>();
  function exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  }

  // The batch of writes of a key that has not started to apply yet: a write joins it, or starts the
  // next. It stays open while it waits for its world (another process's writes to it, on a shared
  // store), so that the writes arriving meanwhile share its one save.
  const open = new Map<string, Job[]>();

  function write(key: string, apply: Job['apply']): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let batch = open.get(key);
      if (!batch) {
        const jobs: Job[] = (batch = []);
        open.set(key, jobs);
        void exclusive(key, () =>
          runBatch(key, jobs, () => {
            if (open.get(key) === jobs) open.delete(key);
          }),
        );
      }
      batch.push({ apply, resolve, reject });
    });
  }

  /** A task after every write queued so far: later writes wait for it. */
  function after<T>(key: string, task: () => Promise<T>): Promise<T> {
    open.delete(key);
    return exclusive(key, task);
  }

  /** Applies a batch of writes in order, saves the world once, and then answers them all; `close` ends the batch to new writes. */
  async function runBatch(key: string, jobs: Job[], close: () => void): Promise<void> {
    let outcomes: Outcome[];
    let release = (): void => {};
    try {
      // Batches of other worlds may be holding their copies: this one waits while they hold too much.
      release = await admit(2 * (worlds.get(key)?.bytes ?? seedBytes));
      const applied = await holding(key, () => {
        close();
        return applyBatch(key, jobs);
      });
      // Kept only now that the store has it: no read sees a write before it is saved (committed).
      applied.keep?.();
      outcomes = applied.outcomes;
    } catch (failure) {
      close();
      // Nothing of the batch was kept, and its answers may have read what was not: none stands.
      outcomes = jobs.map(() => ({ answer: unsaved(failure) }));
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

  /** A batch's outcomes, and how to keep the world it made once that is saved. */
  async function applyBatch(key: string, jobs: Job[]): Promise<{ outcomes: Outcome[]; keep?: () => void }> {
    // Taken only now: a world taken before waiting could have been written or dropped meanwhile.
    // A credential without one gets the seed's, kept only once a write changed it.
    const known = used(key);
    const slot = known ?? { world: seed, bytes: seedBytes };
    const pause = pacer();
    const applied = (await applyTogether(slot, jobs, pause)) ?? (await applyOneByOne(slot, jobs, pause));
    const { outcomes, next } = applied;
    if (!next) return { outcomes };
    let version: number | undefined;
    if (shared) version = await shared.save(key, next.text);
    else if (store) await store.save(key, next.text);
    return {
      outcomes,
      keep() {
        // If the world was dropped meanwhile, its removal is queued after this task, as if dropped just after.
        Object.assign(slot, { world: next.world, bytes: next.bytes, onDisk: store !== undefined, version });
        if (!known) keep(key, slot);
      },
    };
  }

  /** Runs a task on a world: with a shared store, holding it across processes, brought up to date first. */
  function holding<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (!shared) return task();
    const slot = worlds.get(key);
    return shared.hold(
      key,
      slot?.version,
      async (now) => {
        adopt(key, now);
        return task();
      },
      slot?.world ?? seed,
    );
  }

  /** Takes a world as the shared store holds it now, in place of the copy held here. */
  function adopt(key: string, now: Look): void {
    if (now === 'same') return;
    worlds.delete(key);
    if (now !== 'none') keep(key, { world: now.world, bytes: now.bytes, version: now.version, onDisk: true });
  }

  /** The world of a key for a read, which becomes the most recently used: with a shared store, as stored now. */
  async function current(key: string): Promise<Slot | undefined> {
    if (shared) {
      const slot = worlds.get(key);
      const version = slot?.version;
      const now = await shared.look(key, version, slot?.world ?? seed);
      // A write of this process committed meanwhile is newer than what the look found.
      if (worlds.get(key)?.version === version) adopt(key, now);
    }
    return used(key);
  }

  /**
   * The writes of a batch applied to one copy of the world, which is measured once: undefined when
   * one of them failed (an error, or past the records cap) or the world after them all is past its
   * budget (and larger than before), for applyOneByOne to tell which.
   */
  async function applyTogether(slot: Slot, jobs: Job[], pause: () => Promise<void>): Promise<Applied | undefined> {
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

  /** The writes of a batch one at a time, each on a copy of the world as the ones before it left it: only a write at fault is refused. */
  async function applyOneByOne(slot: Slot, jobs: Job[], pause: () => Promise<void>): Promise<Applied> {
    let { world, bytes } = slot;
    let next: Applied['next'];
    const outcomes: Outcome[] = [];
    for (const job of jobs) {
      const copy = copyJson(world);
      try {
        const { answer, changed, afterwards } = await job.apply(copy);
        if (!changed) outcomes.push({ answer });
        else if (copy.created > maxRecords && copy.created > world.created) {
          outcomes.push({
            answer: error(
              403,
              `this sandbox world is full (${maxRecords} records created); POST ${RESET_PATH} with the same credential starts it afresh`,
            ),
          });
        } else {
          const text = await worldText(copy, pause);
          const size = textBytes(text);
          // A world past its budget may still shrink.
          if (size > maxWorldBytes && size > bytes) {
            outcomes.push({
              answer: error(
                413,
                `this sandbox world would hold ${size} bytes, more than its ${maxWorldBytes} (--max-world-bytes); POST ${RESET_PATH} with the same credential starts it afresh`,
              ),
            });
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

  /** Drops the least recently used worlds beyond the cap, and their files after what is queued for them. */
  function trim(): void {
    for (const [victim, slot] of worlds) {
      if (worlds.size <= maxWorlds) break;
      worlds.delete(victim);
      // After the writes queued for it, which may save it yet; unless those writes made the world
      // afresh, and saved it in that file. A file that cannot be removed now is removed at the
      // next start, beyond the cap; a world dropped before its first save has none. A shared
      // store keeps it: this process only lets go of its copy.
      if (store && !shared)
        void after(victim, async () =>
          slot.onDisk && !worlds.get(victim)?.onDisk ? store.drop(victim) : undefined,
        ).catch(() => {});
    }
  }

  /** The world of a key, if it has one, which becomes the most recently used. */
  function used(key: string): Slot | undefined {
    const slot = worlds.get(key);
    if (slot) {
      worlds.delete(key);
      worlds.set(key, slot);
    }
    return slot;
  }

  /** Keeps a new world as the most recently used, dropping the least recently used beyond the cap. */
  function keep(key: string, slot: Slot): void {
    worlds.set(key, slot);
    trim();
  }

  /** The world of `key` as it is now: the seed before its first write. */
  const worldNow = async (key: string): Promise<World> => (await current(key))?.world ?? seed;

  /** Fires `wanted` in the world of `key` as it is now (the seed before its first write): its deliveries, queued. */
  async function fire(
    key: string,
    credential: string,
    wanted: TriggerRequest,
    host: string,
  ): Promise<DeliveryRecord[]> {
    const world = await worldNow(key);
    return webhooks.trigger(key, world, wanted, { caller: callerOf(world, credential), host });
  }

  const error = (status: number, message: string): Answer => ({
    status,
    type: 'application/json',
    body: apiError(context.docsUrl(), message),
    own: true,
  });
  const unsaved = (failure: unknown): Answer =>
    unavailable(failure) ??
    error(500, `the sandbox could not save its state (${(failure as { code?: string }).code ?? String(failure)})`);
  const unread = (failure: unknown): Answer =>
    unavailable(failure) ?? error(500, `the sandbox could not read its state (${String(failure)})`);
  /** A store away for now (a database): 503, and when to try again. */
  const unavailable = (failure: unknown): Answer | undefined =>
    failure instanceof StateUnavailable
      ? { ...error(failure.status, failure.message), headers: { 'Retry-After': String(failure.retryAfter) } }
      : undefined;

  return {
    strict: true,
    async answer(source: SourceRequest): Promise<Answer> {
      const { op, request, preference } = source;
      // A documented example on request, so error screens can be built in the sandbox too.
      if (preference.code !== undefined || preference.example !== undefined || preference.dynamic !== undefined)
        return examples.answer(source);
      const handler = handlerFor(op.operationId);
      if (!handler) return examples.answer(source);
      const { body } = request;
      const readOnly = READ_ONLY.has(op.operationId);
      // A raw upload is stored as its size only, and so is a form's file.
      const tooMuch = readOnly || typeof body === 'string' ? undefined : oversized(body, source.form);
      if (tooMuch !== undefined) return error(413, tooMuch);
      const key = keyOf(source.credential);
      const params = pathParams(op.path, request.url.path);
      const opContext = (world: World) => ({
        world,
        templates,
        params,
        query: (request.url.query ?? {}) as Record<string, string | string[]>,
        body,
        ...(source.form ? { form: source.form } : {}),
        url: source.url,
        docsUrl: context.docsUrl(),
        caller: callerOf(world, source.credential),
        render: renderer.render,
      });

      if (readOnly) {
        // A read makes no world: a credential without one reads the seed, and drops no other world for it.
        let world: World;
        try {
          world = (await current(key))?.world ?? seed;
        } catch (failure) {
          return unread(failure);
        }
        const redirect = op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined;
        return redirect ?? (await handler(opContext(world))).answer;
      }
      return write(key, async (world) => {
        // An old name of a renamed user leads to the new one, before anything else is looked at.
        const redirect = op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined;
        if (redirect) return { answer: redirect, changed: false };
        const watched = webhooks.watch(op.operationId, world, params);
        const result = await handler(opContext(world));
        const afterwards =
          watched && result.changed
            ? webhooks.prepare(watched, world, { key, caller: callerOf(world, source.credential), url: source.url })
            : undefined;
        return afterwards ? { ...result, afterwards } : result;
      });
    },

    async outside(method, url, credential, request) {
      const path = url.pathname;
      let deliveries: Answer | undefined;
      try {
        deliveries = await deliveriesAnswer(webhooks, worldNow, error, {
          method,
          url,
          credential,
          signal: request.signal,
        });
      } catch (failure) {
        return unread(failure);
      }
      if (deliveries) return deliveries;
      let triggered: Answer | undefined;
      try {
        triggered = await triggerAnswer(fire, error, { method, url, credential, request });
      } catch (failure) {
        // The world could not be read (a database away): as for any read.
        return unread(failure);
      }
      if (triggered) return triggered;
      if (path !== RESET_PATH) return undefined;
      if (method !== 'POST')
        return {
          ...error(405, `${method} is not allowed on ${RESET_PATH}; allowed: POST`),
          headers: { Allow: 'POST' },
        };
      const auth = checkAuthorization(credential, undefined);
      if (!auth.ok) return error(401, auth.message);
      const key = keyOf(credential!);
      // Back to the seed is no world at all: the next request starts from the seed, and counts then.
      return after(key, async () => {
        if (store) {
          try {
            await store.drop(key);
          } catch (failure) {
            return unsaved(failure);
          }
        }
        worlds.delete(key);
        webhooks.forget(key);
        return {
          status: 200,
          type: 'application/json',
          body: { message: "this credential's sandbox world is back to the seed" },
        };
      });
    },

    control: {
      async resetAll() {
        await Promise.all(
          [...worlds.keys()].map((key) =>
            after(key, async () => {
              if (store) await store.drop(key);
              worlds.delete(key);
            }),
          ),
        );
        // Worlds this process never held too.
        await shared?.clear();
        webhooks.forget();
      },
      worldOf(authorization) {
        return structuredClone(worlds.get(keyOf(authorization))?.world ?? seed);
      },
      deliveries(authorization) {
        return authorization === undefined ? webhooks.all() : webhooks.log(keyOf(authorization));
      },
      trigger(authorization, request, host) {
        return fire(keyOf(authorization), authorization, request, host);
      },
      async redeliver(authorization, id) {
        const key = keyOf(authorization);
        return webhooks.redeliver(key, id, await worldNow(key));
      },
      waitForDeliveries(authorization, filter, ms) {
        return webhooks.waitFor(authorization === undefined ? undefined : keyOf(authorization), filter, ms);
      },
    },

    async close() {
      // Saves under way finish first; then the folder is free for another process.
      await Promise.all(tails.values());
      await webhooks.close();
      await renderer.close();
      await store?.close();
    },
  };
}
