// The sandbox answer source: each distinct credential gets its own world, seeded from the
// document's examples, and every operation is answered from it (world-ops.ts), so writes show up
// in later reads. `Prefer` still answers the documented examples. Worlds are capped in number
// (the least recently used is dropped), in records and in bytes, can be reset, and can live in a
// state folder (world-store.ts).
//
// A write is applied to a copy of its world; the copy replaces the world only once it is within
// the limits and, with a state folder, saved. So a refused or unsaved write changes nothing, and a
// read never sees what is not on disk. Writes to one world go one at a time, in the order they
// came; those that arrive while a save is under way are applied one after the other and saved
// together (one save, not one each). Reads do not wait.
//
// It imports no Node built-in, so the MSW handlers' browser build runs it as it is: what differs
// by runtime comes in a SandboxPlatform (E11's renderer, the heap's size; the state folder is
// opened by the Node side and handed over as `store`).
import { sha256 } from '@noble/hashes/sha2';
import { base64Text, hex, latin1Bytes, utf8Bytes, utf8Length } from '../bytes.js';
import { checkAuthorization } from '../front/auth.js';
import { apiError } from '../front/errors.js';
import { pathParams, type OperationTable } from '../front/operations.js';
import { MARKDOWN_LIMITS, type MarkdownLimits, type MarkdownRenderer } from './markdown-inline.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from './source.js';
import { oversized, worldBudget } from './sandbox-limits.js';
import { seedWorld, type World } from './world.js';
import { handlerFor, ownerRedirect, READ_ONLY, RESET_PATH } from './world-ops.js';
import type { StateStore } from './world-store.js';

export { RESET_PATH };

export interface SandboxOptions {
  /** Keep the worlds in this folder, one file per world: loaded at start, a world saved after each of its writes. */
  state?: string;
  /** The folder of `state`, opened (by the CLI before anything else, or by answering-node.ts): the sandbox keeps its worlds there. */
  store?: StateStore;
  /** The document whose schemas the records of `state` must match (default: the package's). */
  document?: string;
  /** Most worlds kept; beyond it the least recently used is dropped (default 100). */
  maxWorlds?: number;
  /** Most records one world may create beyond its seed (default 1,000). */
  maxRecords?: number;
  /** Most bytes one world may hold, as JSON (default 16 MiB, or less: see `worldBudget`). */
  maxWorldBytes?: number;
  /** E11's bounds (default MARKDOWN_LIMITS). */
  markdown?: Partial<MarkdownLimits>;
  /** Edits the seed before any world is made from it: every world, and every reset, starts from the edited seed. */
  prepare?: (seed: World) => void;
}

/** What a test can do with the worlds besides sending requests. */
export interface SandboxControl {
  /** Every world back to the seed (with `--state`, their files removed). */
  resetAll(): Promise<void>;
  /** A copy of the world of this `Authorization` header as it is now (the seed, before its first write). */
  worldOf(authorization: string): World;
}

export type Sandbox = AnsweringSource & { control: SandboxControl };

/** What the sandbox takes from the runtime it runs in. */
export interface SandboxPlatform {
  /** E11's renderer within these bounds: worker threads in Node (markdown.ts), the calling thread elsewhere (markdown-inline.ts). */
  markdown(limits: MarkdownLimits): MarkdownRenderer;
  /** V8's heap limit in bytes, which bounds the worlds together (heap.ts); undefined where the runtime does not tell it. */
  heapLimit: number | undefined;
}

/**
 * A world's key: the credential's SHA-256 (of its UTF-8 bytes, in hexadecimal), so no credential
 * is kept in memory maps or on disk. Synchronous and the same in every runtime (@noble/hashes):
 * Web Crypto's digest is asynchronous, and offered by browsers on secure origins only.
 */
function keyOf(credential: string): string {
  return hex(sha256(utf8Bytes(credential)));
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

/** What one write makes of a world: the answer, and the world after it when it changed one. */
interface Outcome {
  answer: Answer;
  next?: { world: World; bytes: number; text: string };
}

/** A write waiting for its turn: applied to the world as the writes before it left it. */
interface Job {
  apply(world: World, bytes: number): Promise<Outcome>;
  resolve(answer: Answer): void;
  reject(error: unknown): void;
}

interface Slot {
  world: World;
  /** Its size as JSON, what the budget counts. */
  bytes: number;
  /** Whether it has a file in the state folder (loaded from one, or saved). */
  onDisk?: boolean;
}

export async function createSandbox(table: OperationTable, examples: AnsweringSource, context: SourceContext, platform: SandboxPlatform, options: SandboxOptions = {}): Promise<Sandbox> {
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
  if (options.state !== undefined && store === undefined) throw new Error('the sandbox keeps worlds in a state folder only where it was opened (Node: answering-node.ts)');
  const renderer = platform.markdown({ ...MARKDOWN_LIMITS, ...options.markdown });

  // Insertion order is recency: a world used is moved to the end, the first is dropped first.
  const worlds = new Map<string, Slot>([...(store?.worlds ?? [])].map(([key, stored]) => [key, { ...stored, onDisk: true }]));

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

  // The batch of writes of a key that has not started yet: a write joins it, or starts the next.
  const open = new Map<string, Job[]>();

  function write(key: string, apply: Job['apply']): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let batch = open.get(key);
      if (!batch) {
        const jobs: Job[] = (batch = []);
        open.set(key, jobs);
        void exclusive(key, () => {
          if (open.get(key) === jobs) open.delete(key);
          return runBatch(key, jobs);
        });
      }
      batch.push({ apply, resolve, reject });
    });
  }

  /** A task after every write queued so far: later writes wait for it. */
  function after<T>(key: string, task: () => Promise<T>): Promise<T> {
    open.delete(key);
    return exclusive(key, task);
  }

  /** Applies a batch of writes in order, saves the world once, and then answers them all. */
  async function runBatch(key: string, jobs: Job[]): Promise<void> {
    // Taken only now: a world taken before waiting could have been written or dropped meanwhile.
    const slot = slotOf(key);
    let world = slot.world;
    let bytes = slot.bytes;
    let text: string | undefined;
    const outcomes: ({ answer: Answer } | { error: unknown })[] = [];
    for (const job of jobs) {
      try {
        const { answer, next } = await job.apply(world, bytes);
        if (next) ({ world, bytes, text } = next);
        outcomes.push({ answer });
      } catch (error) {
        outcomes.push({ error });
      }
    }
    if (text !== undefined) {
      try {
        await store?.save(key, text);
        // If the world was dropped meanwhile, its removal is queued after this task, as if dropped just after.
        Object.assign(slot, { world, bytes, onDisk: store !== undefined });
      } catch (failure) {
        // Nothing of the batch was kept, and its answers may have read what was not: none stands.
        outcomes.fill({ answer: unsaved(failure) });
      }
    }
    outcomes.forEach((outcome, index) => ('error' in outcome ? jobs[index]!.reject(outcome.error) : jobs[index]!.resolve(outcome.answer)));
  }

  /** Drops the least recently used worlds beyond the cap, and their files after what is queued for them. */
  function trim(): void {
    for (const [victim, slot] of worlds) {
      if (worlds.size <= maxWorlds) break;
      worlds.delete(victim);
      // After the writes queued for it, which may save it yet; unless those writes made the world
      // afresh, and saved it in that file. A file that cannot be removed now is removed at the
      // next start, beyond the cap; a world only read has none.
      if (store) void after(victim, async () => (slot.onDisk && !worlds.get(victim)?.onDisk ? store.drop(victim) : undefined)).catch(() => {});
    }
  }

  /** The world of a key, made from the seed if it has none; it becomes the most recently used. */
  function slotOf(key: string): Slot {
    const slot = worlds.get(key) ?? { world: structuredClone(seed), bytes: seedBytes };
    worlds.delete(key);
    worlds.set(key, slot);
    trim();
    return slot;
  }

  const error = (status: number, message: string): Answer => ({ status, type: 'application/json', body: apiError(context.docsUrl(), message), own: true });
  const unsaved = (failure: unknown): Answer => error(500, `the sandbox could not save its state (${(failure as { code?: string }).code ?? String(failure)})`);

  return {
    strict: true,
    async answer(source: SourceRequest): Promise<Answer> {
      const { op, request, preference } = source;
      // A documented example on request, so error screens can be built in the sandbox too.
      if (preference.code !== undefined || preference.example !== undefined || preference.dynamic !== undefined) return examples.answer(source);
      const handler = handlerFor(op.operationId);
      if (!handler) return examples.answer(source);
      let body = request.body;
      const contentType = String(request.headers?.['content-type'] ?? '');
      if (contentType.toLowerCase().startsWith('multipart/form-data') && typeof body === 'string') {
        body = await new Response(latin1Bytes(body), { headers: { 'content-type': contentType } }).formData();
      }
      const readOnly = READ_ONLY.has(op.operationId);
      // A raw upload (E16) is stored as its size only.
      const tooMuch = readOnly || typeof body === 'string' ? undefined : oversized(body);
      if (tooMuch !== undefined) return error(413, tooMuch);
      const key = keyOf(source.credential);
      const params = pathParams(op.path, request.url.path);
      const opContext = (world: World) => ({
        world,
        templates,
        params,
        query: (request.url.query ?? {}) as Record<string, string | string[]>,
        body,
        url: source.url,
        docsUrl: context.docsUrl(),
        caller: callerOf(world, source.credential),
        render: renderer.render,
      });

      if (readOnly) {
        const { world } = slotOf(key);
        const redirect = op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined;
        return redirect ?? (await handler(opContext(world))).answer;
      }
      return write(key, async (world, bytes) => {
        // An old name of a renamed user leads to the new one, before anything else is looked at.
        const redirect = op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined;
        if (redirect) return { answer: redirect };
        const copy = structuredClone(world);
        const { answer, changed } = await handler(opContext(copy));
        if (!changed) return { answer };
        if (copy.created > maxRecords && copy.created > world.created) {
          return { answer: error(403, `this sandbox world is full (${maxRecords} records created); POST ${RESET_PATH} with the same credential starts it afresh`) };
        }
        const text = JSON.stringify(copy);
        const size = utf8Length(text);
        // A world past its budget may still shrink.
        if (size > maxWorldBytes && size > bytes) {
          return { answer: error(413, `this sandbox world would hold ${size} bytes, more than its ${maxWorldBytes} (--max-world-bytes); POST ${RESET_PATH} with the same credential starts it afresh`) };
        }
        return { answer, next: { world: copy, bytes: size, text } };
      });
    },

    async outside(method, path, credential) {
      if (path !== RESET_PATH) return undefined;
      if (method !== 'POST') return { ...error(405, `${method} is not allowed on ${RESET_PATH}; allowed: POST`), headers: { Allow: 'POST' } };
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
        return { status: 200, type: 'application/json', body: { message: 'this credential\'s sandbox world is back to the seed' } };
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
      },
      worldOf(authorization) {
        return structuredClone(worlds.get(keyOf(authorization))?.world ?? seed);
      },
    },

    async close() {
      // Saves under way finish first; then the folder is free for another process.
      await Promise.all(tails.values());
      await renderer.close();
      await store?.close();
    },
  };
}
