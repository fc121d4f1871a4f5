// A bot's way in: deliveries routed to handlers by event type (`X-Gitea-Event-Type`) and action,
// each delivery's signature checked before anything runs (parseWebhook), as a Fetch handler for
// any runtime and a middleware for node:http and Express. A refused delivery reaches no handler.
import { WebhookError } from './errors.js';
import {
  type OtherWebhookDelivery,
  parseWebhook,
  type WebhookDelivery,
  type WebhookName,
  type WebhookPayload,
} from './webhooks.js';

/** The actions a webhook of the contract carries, where it has any. */
type ActionOf<Name extends WebhookName> =
  WebhookPayload<Name> extends { action: infer Action extends string } ? Action : never;

/** What `on` takes: an event type, or an event type and one of its actions (`pull_request.closed`). */
export type WebhookEventName = { [Name in WebhookName]: Name | `${Name}.${ActionOf<Name>}` }[WebhookName];

/** The delivery a handler of `Key` receives, its payload typed for that event and action. */
export type WebhookEventOf<Key extends WebhookEventName> = Key extends `${infer Name}.${infer Action}`
  ? Extract<WebhookDelivery, { type: Name }> & { payload: { action: Action } }
  : Extract<WebhookDelivery, { type: Key }>;

type Handler<Event> = (event: Event) => unknown;

/** Why a delivery was not handled: refused as it came (`WebhookError`), or a handler failed. */
export type WebhookRouterError =
  | { kind: 'refused'; error: WebhookError }
  | { kind: 'handler'; error: unknown; delivery: WebhookDelivery | OtherWebhookDelivery };

export interface WebhookRouterOptions {
  /** The hook's secret; `null` for a hook without one, whose deliveries anyone could have sent. */
  secret: string | null;
  /** Most bytes of a delivery read (default 10 MiB). */
  maxBytes?: number;
}

export interface WebhookRouter {
  /** Runs `handler` for each delivery of `event`: an event type, or a type and action. */
  on<Key extends WebhookEventName>(event: Key | readonly Key[], handler: Handler<WebhookEventOf<Key>>): void;
  /** Runs `handler` for every delivery, those of events and actions the contract does not describe included. */
  onAny(handler: Handler<WebhookDelivery | OtherWebhookDelivery>): void;
  /** Runs `handler` when a delivery is refused or a handler fails. */
  onError(handler: (failure: WebhookRouterError) => unknown): void;
  /**
   * Answers a delivery: 200 once every handler of it is done, the status of its `WebhookError`
   * (400, 401, 413) when it is refused, 500 when a handler failed, 405 for another method than
   * POST (or GET, which Gitea's GET hooks use).
   */
  fetch(request: Request): Promise<Response>;
}

const text = (status: number, body: string, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });

/** A router of deliveries to handlers; see `WebhookRouter`. */
export function createWebhookRouter(options: WebhookRouterOptions): WebhookRouter {
  const { secret, maxBytes } = options;
  if (secret !== null && (typeof secret !== 'string' || secret === ''))
    throw new TypeError("createWebhookRouter needs the hook's secret, or null for a hook without one");
  const handlers = new Map<string, Handler<never>[]>();
  const any: Handler<WebhookDelivery | OtherWebhookDelivery>[] = [];
  const errors: ((failure: WebhookRouterError) => unknown)[] = [];

  const report = async (failure: WebhookRouterError): Promise<void> => {
    for (const handler of errors) {
      try {
        await handler(failure);
      } catch {
        // An error handler that fails has nobody left to tell.
      }
    }
  };

  return {
    on(event, handler) {
      for (const key of typeof event === 'string' ? [event] : event) {
        const list = handlers.get(key) ?? [];
        list.push(handler as Handler<never>);
        handlers.set(key, list);
      }
    },
    onAny(handler) {
      any.push(handler);
    },
    onError(handler) {
      errors.push(handler);
    },
    async fetch(request) {
      if (request.method !== 'POST' && request.method !== 'GET')
        return text(405, 'a webhook delivery is a POST\n', { allow: 'POST, GET' });
      let delivery: WebhookDelivery | OtherWebhookDelivery;
      try {
        delivery = await parseWebhook(request, { secret, ...(maxBytes === undefined ? {} : { maxBytes }) });
      } catch (caught) {
        // A body that broke off as it was read is refused as one that cannot be read.
        const error =
          caught instanceof WebhookError
            ? caught
            : new WebhookError(400, 'malformed', 'the delivery could not be read');
        await report({ kind: 'refused', error });
        return text(error.status, `${error.message}\n`);
      }
      const action = (delivery.payload as { action?: unknown }).action;
      // The contract's own deliveries reach their typed handlers; every delivery reaches onAny.
      const routed = delivery.known
        ? [
            ...(handlers.get(delivery.type) ?? []),
            ...(typeof action === 'string' ? (handlers.get(`${delivery.type}.${action}`) ?? []) : []),
          ]
        : [];
      const results = await Promise.allSettled(
        [...routed, ...any].map(async (handler) => (handler as Handler<typeof delivery>)(delivery)),
      );
      const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
      for (const { reason } of failed) await report({ kind: 'handler', error: reason, delivery });
      if (failed.length > 0) return text(500, 'the app failed to handle the delivery\n');
      return text(200, 'ok\n');
    },
  };
}

/** What createNodeMiddleware reads of Node's `IncomingMessage` (Express's request is one). */
interface NodeRequest extends AsyncIterable<Uint8Array | string> {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** What createNodeMiddleware writes with of Node's `ServerResponse`. */
interface NodeResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body?: Uint8Array | string): unknown;
}

export interface NodeMiddlewareOptions {
  /** The path deliveries come to (default `/`); other paths go to `next`, or are answered 404. */
  path?: string;
}

/**
 * The router as a `node:http` request listener and an Express middleware: requests to `path` are
 * answered by `router.fetch`, others passed to `next` (Express) or answered 404.
 */
export function createNodeMiddleware(
  router: Pick<WebhookRouter, 'fetch'>,
  options: NodeMiddlewareOptions = {},
): (request: NodeRequest, response: NodeResponse, next?: (error?: unknown) => void) => Promise<void> {
  const path = options.path ?? '/';
  return async (request, response, next) => {
    const url = new URL(request.url ?? '/', `http://${String(request.headers.host ?? 'localhost')}`);
    if (url.pathname !== path) {
      if (next) next();
      else {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('not a webhook path\n');
      }
      return;
    }
    try {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (value === undefined) continue;
        for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
      }
      const method = request.method ?? 'GET';
      // Pulled as the router reads it, so that its bound on a delivery's bytes bounds what is read.
      const chunks = request[Symbol.asyncIterator]();
      const body =
        method === 'GET' || method === 'HEAD'
          ? undefined
          : new ReadableStream<Uint8Array>({
              async pull(controller) {
                const { done, value } = await chunks.next();
                if (done) controller.close();
                else controller.enqueue(typeof value === 'string' ? new TextEncoder().encode(value) : value);
              },
              async cancel() {
                await chunks.return?.();
              },
            });
      const answer = await router.fetch(
        new Request(url, { method, headers, body, ...(body ? { duplex: 'half' } : {}) } as RequestInit),
      );
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(new Uint8Array(await answer.arrayBuffer()));
    } catch (error) {
      if (next) next(error);
      else {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('the delivery could not be read\n');
      }
    }
  };
}
