// `gitea-mock/msw`, what Node and browsers share: MSW handlers over the server's Fetch front (front/app.ts).
import type { ServerProfile } from 'gitea-contract';
import { http, type HttpHandler } from 'msw';
import { BASE_PATH } from '../front/app.js';
import type { AnsweringChoices, AnsweringMock, SandboxChoices } from '../answering.js';
import { createConditions, seedText, type ConditionOptions } from '../front/conditions.js';
import { JOURNAL_PATH, type JournalEntry } from '../front/journal.js';
import { FORGEJO_VERSION_PATH } from '../front/server-profile.js';
import { isForgejo, profileOf } from '../contract/document.js';
import type { SandboxControl, SandboxOptions } from '../sandbox/sandbox.js';
import { RESET_PATH } from '../sandbox/backend.js';
import type { World } from '../sandbox/world.js';
import { DELIVERIES_PATH, type DeliveryRecord } from '../webhooks/deliveries.js';
import { MAX_WAIT_SECONDS, TRIGGER_PATH } from '../sandbox/hooks.js';

export type { DeliveryRecord, JournalEntry, World };
/** An `Authorization` header value (`token abc`, `Basic …`) or `{ token }`. */
type Credential = string | { token: string };

export interface GiteaHandlersOptions extends Omit<ConditionOptions, 'seed'> {
  /** Where the app finds the API, ending in `/api/v1`: absolute, or relative (`/api/v1`) for an app of the same origin. */
  baseUrl: string;
  /** Answer from a world per credential that remembers writes (`true`, or its options) instead of the examples. */
  sandbox?: boolean | SandboxChoices;
  /** Each webhook delivery the sandbox's writes cause, a copy of its own (recorded, not sent); one that throws is told on `console.error`. */
  onDelivery?: (delivery: DeliveryRecord) => void;
  /** Generate answers from the schemas instead of the examples (no sandbox). Node only. */
  dynamic?: boolean;
  /** Makes dynamic answers, random delays and random faults repeatable: `7` and `'7'` are one seed. */
  seed?: string | number;
  /** Another OpenAPI document: the path of its file (Node only), or the document as data. */
  document?: string | Record<string, unknown>;
  /** The server to be (SERVER_PROFILES), its profile's document from this package; Node only (browsers: `document`). */
  server?: ServerProfile;
  /** Problems of the mock itself, such as an answer that breaks the document (default: console.warn). */
  onWarning?: (line: string) => void;
}

export interface GiteaHandlers {
  /** For `setupServer(...handlers)`, `setupWorker(...handlers)` or `.use(...handlers)`. */
  handlers: HttpHandler[];
  /** Every sandbox world back to the seed, and every journal emptied. */
  reset(): Promise<void>;
  /** The requests the handlers answered, oldest first: of one credential, or of all. */
  requests(credential?: Credential): Promise<JournalEntry[]>;
  /** A copy of a credential's sandbox world as it is now; undefined without the sandbox. */
  world(credential: Credential): Promise<World | undefined>;
  /** Copies of the webhook deliveries, oldest first, of one credential's world or all (the newest 100 of each). */
  deliveries(credential?: Credential): Promise<DeliveryRecord[]>;
  /** Fires an event in a credential's world, as `POST /__sandbox/trigger` does; resolves with its deliveries. */
  trigger(wanted: {
    event: string;
    action?: string;
    repository: string;
    credential: Credential;
  }): Promise<DeliveryRecord[]>;
  /** Records the logged delivery `id` again, as Gitea's replay sends it, under a new delivery id. */
  redeliver(credential: Credential, id: string): Promise<DeliveryRecord>;
  /** The first delivery of this event and action to settle, of one credential's world or any; rejects after `timeoutMs` (default 5,000, at most 60,000). */
  waitForDelivery(wanted: {
    event?: string;
    action?: string;
    timeoutMs?: number;
    credential?: Credential;
  }): Promise<DeliveryRecord>;
  /** Stops what the mock started (the sandbox's markdown workers, in Node). */
  close(): Promise<void>;
}

/** What the mock starts with: the answering mock's choices, and the document (data, or a file in Node). */
export type StartOptions = AnsweringChoices & Pick<GiteaHandlersOptions, 'document' | 'server'>;

/** `base` without `/api/v1` (`` for a relative one), checked. */
function originPart(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const given = JSON.stringify(baseUrl);
  if (!trimmed.endsWith(BASE_PATH))
    throw new TypeError(`baseUrl must end in ${BASE_PATH}, as a Gitea host serves its API there: ${given}`);
  const prefix = trimmed.slice(0, -BASE_PATH.length);
  if (prefix !== '' && !/^https?:\/\/[^/?#]+$/.test(prefix))
    throw new TypeError(`baseUrl must be an http(s) origin followed by ${BASE_PATH}, or ${BASE_PATH} alone: ${given}`);
  return prefix;
}

/** What a handler matches: the path on the base URL's origin, else the page's, else (Node) any origin. */
function matching(origin: string, path: string): string | RegExp {
  if (origin !== '') return `${origin}${path}`;
  if (typeof location !== 'undefined') return `${location.origin}${path}`;
  const escaped = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/\*$/, '(?:/.*)?');
  return new RegExp(`^https?://[^/?#]+${escaped}(?:[?#].*)?$`);
}

/** The handlers over a mock that `start` makes on the first request (MSW's setup is synchronous). */
export function createHandlersWith(
  options: GiteaHandlersOptions,
  start: (options: StartOptions, docsUrl: () => string) => Promise<AnsweringMock>,
): GiteaHandlers {
  const origin = originPart(options.baseUrl);
  const { baseUrl: _, sandbox: wanted, onDelivery, onWarning, seed: given, ...choices } = options;
  // Checked now, not at the first request.
  const seed = seedText(given);
  const seeded = { ...choices, ...(seed === undefined ? {} : { seed }) };
  createConditions(seeded);
  const chosen = wanted === true ? {} : wanted || undefined;
  const sandbox: SandboxOptions | undefined = chosen && {
    ...chosen,
    webhooks: { ...chosen.webhooks, send: false, ...(onDelivery ? { onDelivery } : {}) },
  };
  let docsUrl = '';
  let mock: Promise<AnsweringMock> | undefined;
  const warn = onWarning ?? ((line: string) => console.warn(`gitea-mock: ${line}`));
  const started = { ...seeded, ...(sandbox === undefined ? {} : { sandbox }), onWarning: warn };
  const ready = (): Promise<AnsweringMock> => (mock ??= start(started, () => docsUrl));

  const answer = async ({ request }: { request: Request }): Promise<Response> => {
    // Error bodies name the API documentation of the host the app talks to, as Gitea's do.
    docsUrl ||= `${new URL(request.url).origin}/api/swagger`;
    return (await ready()).app.fetch(request);
  };
  const sandboxPaths = sandbox ? [RESET_PATH, DELIVERIES_PATH, `${DELIVERIES_PATH}/*`, TRIGGER_PATH] : [];
  // Forgejo's own version endpoint, for a Forgejo profile named or given as data.
  const profile = options.server ?? (typeof options.document === 'object' ? profileOf(options.document) : undefined);
  const forgejo = isForgejo(profile) ? [FORGEJO_VERSION_PATH] : [];
  const paths = [BASE_PATH, `${BASE_PATH}/*`, JOURNAL_PATH, ...forgejo, ...sandboxPaths];
  const credentialOf = (credential: Credential): string =>
    typeof credential === 'string' ? credential : `token ${credential.token}`;
  const anyOf = (credential?: Credential) => (credential === undefined ? undefined : credentialOf(credential));
  const sandboxOf = async (what: string): Promise<SandboxControl> => {
    const started = (await ready()).sandbox;
    if (!started) throw new TypeError(`${what} needs the sandbox: createGiteaHandlers({ sandbox: true, … })`);
    return started;
  };

  return {
    handlers: paths.map((path) => http.all(matching(origin, path), answer)),
    async reset() {
      if (!mock) return;
      const started = await mock;
      started.journal.clear();
      await started.sandbox?.resetAll();
    },
    requests: async (credential) => (mock ? (await mock).journal.list(anyOf(credential)) : []),
    world: async (credential) => (await ready()).sandbox?.worldOf(credentialOf(credential)),
    deliveries: async (credential) => (await ready()).sandbox?.deliveries(anyOf(credential)) ?? [],
    async trigger({ event, action, repository, credential }) {
      const host = origin === '' ? 'localhost' : new URL(origin).hostname;
      const wanted = { event, repository, ...(action === undefined ? {} : { action }) };
      return (await sandboxOf('trigger')).trigger(credentialOf(credential), wanted, host);
    },
    async redeliver(credential, id) {
      const record = await (await sandboxOf('redeliver')).redeliver(credentialOf(credential), id);
      if (!record) throw new Error(`no delivery ${id} in this credential's log`);
      return record;
    },
    async waitForDelivery({ event, action, timeoutMs = 5000, credential }) {
      if (!(timeoutMs >= 0 && timeoutMs <= MAX_WAIT_SECONDS * 1000))
        throw new RangeError(`timeoutMs must be from 0 to ${MAX_WAIT_SECONDS * 1000}: ${timeoutMs}`);
      const filter = { ...(event === undefined ? {} : { type: event }), ...(action === undefined ? {} : { action }) };
      const waited = await (await sandboxOf('waitForDelivery')).waitForDeliveries(anyOf(credential), filter, timeoutMs);
      if (typeof waited === 'object') return waited.deliveries[0]!;
      const none = ['no', event, action, 'delivery settled within'].filter(Boolean).join(' ');
      throw new Error(waited === 'busy' ? 'too many waits for deliveries are under way' : `${none} ${timeoutMs} ms`);
    },
    async close() {
      if (mock) await (await mock).close();
    },
  };
}
