// How the client puts requests on the wire: without building a Request twice, with retries of
// idempotent requests on network errors, 429, 502, 503 and 504, honouring Retry-After, and
// following redirects itself, only while they stay on the server the request went to.

export interface RetryOptions {
  /** How many times to re-send (default 2; 0 turns retries off; Infinity re-sends until an answer not worth another try). */
  retries?: number;
  /** Methods that may be re-sent, in any case (default GET, HEAD, PUT, DELETE, OPTIONS). Add POST or PATCH only if re-sending is safe. */
  methods?: string[];
  /** Longest wait before a retry; a longer Retry-After returns the answer instead (default 10 000 ms). */
  maxDelayMs?: number;
  /** First back-off step, doubled each attempt and jittered (default 250 ms). */
  baseDelayMs?: number;
}

/**
 * What openapi-fetch builds in place of a Request while no middleware needs a real one: fetch
 * then builds its Request once instead of copying one, which is most of openapi-fetch's cost.
 */
export class LiteRequest {
  // Declared, not defined: the constructor sets each.
  declare readonly url: string;
  declare readonly init: RequestInit;
  declare readonly method: string;
  constructor(url: string, init: RequestInit) {
    this.url = url;
    this.init = init;
    this.method = init.method!;
  }
}

/**
 * Milliseconds a Retry-After value asks for (seconds or an HTTP date), or NaN when it asks for no
 * wait at all: a date in the past (`-5` reads as the year −5), zero, or nothing readable. NaN
 * means the exponential back-off, so such an answer cannot make the client re-send at once.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  const ms = value === null ? NaN : /^\s*\d+\s*$/.test(value) ? +value * 1000 : Date.parse(value) - now;
  return ms > 0 ? ms : NaN;
}

/** Answers worth another try: too many requests, and a gateway or server that is briefly unavailable. */
const RETRY_STATUSES = [429, 502, 503, 504];

export type Transport = (request: Request | LiteRequest, signal?: AbortSignal) => Promise<Response>;

/** The statuses fetch follows as redirects. */
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
/** The most redirects one call follows, as fetch. */
const MAX_REDIRECTS = 20;
/** Headers that describe a body, dropped with it when a redirect turns the request into a GET (as fetch). */
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type'];

/**
 * Why the transport did not follow a redirect, by the answer it hands back instead: the client
 * makes that answer an ApiError with this text.
 */
export const unfollowed = new WeakMap<Response, string>();

/** `url` as a redirect's target is named: its origin, never its path or query (which may hold a token). */
function nameOf(url: URL): string {
  return /^https?:$/.test(url.protocol) ? url.origin : `a ${url.protocol} URL`;
}

/**
 * Why a redirect from `from` to `to` (undefined: a Location that is no URL) is not followed, else
 * undefined. It may stay on the same origin (scheme, host and port), or go from http: to https:
 * on the same host name. Gitea's own redirects (renamed repositories and owners) stay on its
 * host; anywhere else would receive what fetch passes on across origins (X-Gitea-OTP, Sudo,
 * extra credential headers, on 307 and 308 the body), in clear over plain http.
 */
function refusal(from: URL, to: URL | undefined, hops: number): string | undefined {
  if (!to) return 'redirect not followed: its Location is not a URL';
  const target = `redirect to ${nameOf(to)} not followed`;
  if (
    to.origin !== from.origin &&
    !(from.protocol === 'http:' && to.protocol === 'https:' && to.hostname === from.hostname)
  ) {
    return `${target}: ${from.protocol === 'https:' && to.protocol === 'http:' && to.hostname === from.hostname ? 'it would go from https to plain http' : `it leaves ${from.host}`}`;
  }
  return hops >= MAX_REDIRECTS ? `${target}: more than ${MAX_REDIRECTS} redirects in a row` : undefined;
}

/**
 * In a browser, fetch with `redirect: 'manual'` answers an opaque redirect: status 0, no headers,
 * so where it leads is hidden and cannot be checked. It is not followed (following would let the
 * browser send the credential headers and body wherever it leads).
 */
const opaque = (from: URL) =>
  `redirect not followed: the browser hides where it leads, so it could leave ${from.host}; Gitea redirects the old name of a renamed repository or owner, so call the new name`;

/**
 * The request a redirect to `to` asks for, as fetch makes it: 303 (but for HEAD), and 301 or 302
 * after a POST, become a GET without body; otherwise the method and body stay (a Request's body
 * is read from the copy kept for that).
 */
async function redirected(request: Request | LiteRequest, status: number, to: URL): Promise<LiteRequest> {
  const { method } = request;
  const lite = request instanceof LiteRequest;
  const toGet =
    (status === 303 && method !== 'GET' && method !== 'HEAD') ||
    ((status === 301 || status === 302) && method === 'POST');
  const headers = new Headers(lite ? request.init.headers : request.headers);
  if (toGet) for (const name of BODY_HEADERS) headers.delete(name);
  const body = toGet ? null : lite ? request.init.body : request.body && (await request.arrayBuffer());
  return new LiteRequest(to.href, {
    ...(lite ? request.init : { signal: request.signal }),
    method: toGet ? 'GET' : method,
    headers,
    body: body ?? null,
    redirect: 'manual',
  });
}

/**
 * Lets go of an answer's body without waiting for it: the cancel of an answer MSW 2 mocks never
 * settles (mswjs/interceptors#799), and waiting would hold the retry or the redirect for ever.
 */
function discard(response: Response): void {
  response.body?.cancel().catch(() => {});
}

/** Why reading an answer stopped: its body, decompressed, passed `maxBodyBytes`. */
export class BodyTooLarge extends Error {}

/** Statuses whose answers a Response refuses a body for, and the opaque redirect's 0. */
const BODYLESS = [0, 101, 103, 204, 205, 304];

/**
 * `response` with a body that errors with BodyTooLarge once more than `max` bytes have been read
 * from it, as decompressed: a small gzip answer may inflate to gigabytes. The status, headers and
 * URL stay. An answer without a body, or not compressed and of a declared length within `max`
 * (fetch reads no more than it declares), is handed back as it is, at no cost.
 */
export function boundedBody(response: Response, max: number): Response {
  const { headers } = response;
  if (
    !response.body ||
    max === Number.POSITIVE_INFINITY ||
    BODYLESS.includes(response.status) ||
    (!headers.has('content-encoding') && Number(headers.get('content-length') ?? Number.NaN) <= max)
  )
    return response;
  let read = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > max)
          controller.error(new BodyTooLarge(`the answer's body is larger than maxBodyBytes (${max} bytes); not read`));
        else controller.enqueue(chunk);
      },
    }),
  );
  const { status, statusText, url } = response;
  const bounded = new Response(body, { status, statusText, headers });
  Object.defineProperty(bounded, 'url', { value: url });
  return bounded;
}

/** Refuses what is not a number ≥ 0 (Infinity included), naming what it should count; else returns it. */
export function checkCount(name: string, value: unknown, of: string): number {
  if (typeof value !== 'number' || !(value >= 0)) throw new TypeError(`${name} is not a number of ${of}`);
  return value;
}

/** `retry`: how many retries, or the full settings; every value is checked, as NaN would retry for ever. */
export function createTransport(baseFetch: typeof fetch, retry: number | RetryOptions = {}): Transport {
  const settings = typeof retry === 'object' && retry ? retry : { retries: retry };
  const {
    retries = 2,
    methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'],
    maxDelayMs = 10_000,
    baseDelayMs = 250,
  } = settings;
  checkCount(settings === retry ? 'retry.retries' : 'retry', retries, 'retries (0 for none)');
  checkCount('retry.maxDelayMs', maxDelayMs, 'milliseconds');
  checkCount('retry.baseDelayMs', baseDelayMs, 'milliseconds');
  if (!Array.isArray(methods) || methods.some((method) => typeof method !== 'string'))
    throw new TypeError('retry.methods is not a list of method names');
  // Requests carry their method in upper case.
  const allowed = methods.map((method) => method.toUpperCase());
  /**
   * Puts `request` on the wire with fetch's redirect mode `redirect`; `keep` leaves a Request's
   * body readable for another send (a retry, or the next hop of a 307 or 308).
   */
  const put = (request: Request | LiteRequest, redirect: RequestRedirect, keep: boolean): Promise<Response> => {
    if (request instanceof LiteRequest)
      return baseFetch(request.url, request.init.redirect === redirect ? request.init : { ...request.init, redirect });
    // A Request body can be read once: copies go first, the original last. The signal goes along
    // by hand: Node 20's fetch stops following a copy's signal once the copy is garbage-collected.
    return baseFetch(keep && request.body ? request.clone() : request, { redirect, signal: request.signal });
  };

  /** Sends `request`, re-sending it as the retry settings allow. */
  const send = async (
    request: Request | LiteRequest,
    redirect: RequestRedirect,
    keep: boolean,
    signal: AbortSignal | undefined,
  ): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries || !allowed.includes(request.method);
      let wait = NaN;
      try {
        const response = await put(request, redirect, keep || !last);
        if (
          last ||
          !RETRY_STATUSES.includes(response.status) ||
          (wait = retryAfterMs(response.headers.get('retry-after'))) > maxDelayMs
        )
          return response;
        discard(response);
      } catch (error) {
        if (last || signal?.aborted) throw error;
      }
      await new Promise((resolve, reject) => {
        const timer = setTimeout(
          resolve,
          wait >= 0 ? wait : Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2),
        );
        const abort = () => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', abort, { once: true });
      });
    }
  };

  return async (request, signal) => {
    const mode = (request instanceof LiteRequest ? request.init.redirect : request.redirect) ?? 'follow';
    // A caller's 'manual' or 'error' is fetch's to apply; 'follow' is done here, on the server only.
    if (mode !== 'follow') return send(request, mode, false, signal);
    for (let hops = 0; ; hops++) {
      const response = await send(request, 'manual', true, signal);
      if (response.type === 'opaqueredirect') {
        unfollowed.set(response, opaque(new URL(request.url)));
        return response;
      }
      const location = REDIRECT_STATUSES.includes(response.status) ? response.headers.get('location') : null;
      // fetch too hands back a redirect without a Location as it is.
      if (location === null) return response;
      const from = new URL(request.url);
      let to: URL | undefined;
      try {
        to = new URL(location, from);
      } catch {
        // Named in the refusal, not quoted: it may hold a token.
      }
      const why = refusal(from, to, hops);
      if (why) {
        unfollowed.set(response, why);
        return response;
      }
      discard(response);
      request = await redirected(request, response.status, to!);
    }
  };
}
