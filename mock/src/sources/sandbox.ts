// The sandbox answer source: each distinct credential gets its own world, seeded from the
// document's examples, and every operation is answered from it (world-ops.ts), so writes show up
// in later reads. `Prefer` still answers the documented examples. Worlds are capped in number
// (the least recently used is dropped) and in size, can be reset, and can live in a state file.
import { createHash } from 'node:crypto';
import { checkAuthorization } from '../front/auth.js';
import { apiError } from '../front/errors.js';
import { pathParams, type OperationTable } from '../front/operations.js';
import type { Answer, AnsweringSource, SourceContext, SourceRequest } from './source.js';
import { seedWorld, type World } from './world.js';
import { handlerFor, ownerRedirect } from './world-ops.js';
import { createSaver, loadWorlds, type Saver } from './world-store.js';

export interface SandboxOptions {
  /** Keep the worlds in this file: loaded at start, saved after every write. */
  state?: string;
  /** The worlds of `state`, when the caller has loaded them already (the CLI does, before Prism). */
  loaded?: Map<string, World>;
  /** Most worlds kept; beyond it the least recently used is dropped (default 100). */
  maxWorlds?: number;
  /** Most records one world may create beyond its seed (default 1,000). */
  maxRecords?: number;
}

export const RESET_PATH = '/__sandbox/reset';

/** A world's key: the credential's SHA-256, so no credential is kept in memory maps or on disk. */
function keyOf(credential: string): string {
  return createHash('sha256').update(credential).digest('hex');
}

/** Who is calling: the Basic user name when it names a user of the world, else the first user (alice). */
function callerOf(world: World, credential: string): World['users'][number] {
  const [scheme = '', value = ''] = credential.split(' ');
  if (scheme.toLowerCase() === 'basic') {
    const login = Buffer.from(value, 'base64').toString('utf8').split(':')[0]?.toLowerCase();
    const user = world.users.find((candidate) => String(candidate.login).toLowerCase() === login);
    if (user) return user;
  }
  return world.users[0]!;
}

export async function createSandbox(table: OperationTable, examples: AnsweringSource, context: SourceContext, options: SandboxOptions = {}): Promise<AnsweringSource> {
  const { seed, templates } = seedWorld(table.operations.map((op) => op.operation));
  const maxWorlds = options.maxWorlds ?? 100;
  const maxRecords = options.maxRecords ?? 1000;
  // Insertion order is recency: a world used is moved to the end, the first is dropped first.
  const worlds = options.loaded ?? (options.state ? await loadWorlds(options.state) : new Map<string, World>());
  const saver: Saver | undefined = options.state ? createSaver(options.state, () => worlds) : undefined;

  function worldOf(credential: string): World {
    const key = keyOf(credential);
    let world = worlds.get(key);
    if (world) worlds.delete(key);
    else world = structuredClone(seed);
    worlds.set(key, world);
    while (worlds.size > maxWorlds) worlds.delete(worlds.keys().next().value!);
    return world;
  }

  const error = (status: number, message: string): Answer => ({ status, type: 'application/json', body: apiError(context.docsUrl(), message) });

  /** Saves after a change; a write the disk did not take is not acknowledged. */
  async function saved(answer: Answer): Promise<Answer> {
    if (!saver) return answer;
    try {
      await saver.save();
      return answer;
    } catch (failure) {
      return { ...error(500, `the sandbox could not save its state (${(failure as NodeJS.ErrnoException).code ?? String(failure)})`), own: true };
    }
  }

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
        body = await new Response(Buffer.from(body, 'latin1'), { headers: { 'content-type': contentType } }).formData();
      }
      // Only now: a world taken before an await could be dropped by others meanwhile.
      const world = worldOf(source.credential);
      const params = pathParams(op.path, request.url.path);
      // An old name of a renamed user leads to the new one, before anything else is looked at.
      const redirect = op.responses.has(307) ? ownerRedirect(world, params, source.url) : undefined;
      if (redirect) return redirect;
      const before = world.created;
      // At the cap, a write that would create a record is undone; the copy is only paid for there.
      const backup = before >= maxRecords ? structuredClone(world) : undefined;
      const { answer, changed } = await handler({
        world,
        templates,
        params,
        query: (request.url.query ?? {}) as Record<string, string | string[]>,
        body,
        url: source.url,
        docsUrl: context.docsUrl(),
        caller: callerOf(world, source.credential),
      });
      if (backup && world.created > before) {
        Object.assign(world, backup);
        return error(403, `this sandbox world is full (${maxRecords} records created); POST ${RESET_PATH} with the same credential starts it afresh`);
      }
      return changed ? saved(answer) : answer;
    },

    async outside(method, path, credential) {
      if (path !== RESET_PATH) return undefined;
      if (method !== 'POST') return { ...error(405, `${method} is not allowed on ${RESET_PATH}; allowed: POST`), headers: { Allow: 'POST' } };
      const auth = checkAuthorization(credential, undefined);
      if (!auth.ok) return error(401, auth.message);
      worlds.delete(keyOf(credential!));
      worlds.set(keyOf(credential!), structuredClone(seed));
      return saved({ status: 200, type: 'application/json', body: { message: 'this credential\'s sandbox world is back to the seed' } });
    },
  };
}
