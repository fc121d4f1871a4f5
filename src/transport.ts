// How the client puts requests on the wire: without building a Request twice, and with retries
// of idempotent requests on network errors, 429, 502, 503 and 504, honouring Retry-After.

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

/** Milliseconds a Retry-After value asks for (seconds or an HTTP date), or NaN. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  return value === null ? NaN : /^\s*\d+\s*$/.test(value) ? +value * 1000 : Math.max(0, Date.parse(value) - now);
}

/** Answers worth another try: too many requests, and a gateway or server that is briefly unavailable. */
const RETRY_STATUSES = [429, 502, 503, 504];

export type Transport = (request: Request | LiteRequest, signal?: AbortSignal) => Promise<Response>;

/** Refuses what is not a number ≥ 0 (Infinity included), naming what it should count; else returns it. */
export function checkCount(name: string, value: unknown, of: string): number {
  if (typeof value != 'number' || !(value >= 0)) throw new TypeError(`${name} is not a number of ${of}`);
  return value;
}

/** `retry`: how many retries, or the full settings; every value is checked, as NaN would retry for ever. */
export function createTransport(baseFetch: typeof fetch, retry: number | RetryOptions = {}): Transport {
  const settings = typeof retry == 'object' && retry ? retry : { retries: retry };
  const { retries = 2, methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'], maxDelayMs = 10_000, baseDelayMs = 250 } = settings;
  checkCount(settings == retry ? 'retry.retries' : 'retry', retries, 'retries (0 for none)');
  checkCount('retry.maxDelayMs', maxDelayMs, 'milliseconds');
  checkCount('retry.baseDelayMs', baseDelayMs, 'milliseconds');
  if (!Array.isArray(methods) || methods.some((method) => typeof method != 'string')) throw new TypeError('retry.methods is not a list of method names');
  // Requests carry their method in upper case.
  const allowed = methods.map((method) => method.toUpperCase());
  return async (request, signal) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries || !allowed.includes(request.method);
      let wait = NaN;
      try {
        // A Request body can be read once: copies go first, the original last.
        const response = await (request instanceof LiteRequest ? baseFetch(request.url, request.init) : baseFetch(last || !request.body ? request : request.clone()));
        if (last || !RETRY_STATUSES.includes(response.status) || (wait = retryAfterMs(response.headers.get('retry-after'))) > maxDelayMs) return response;
        await response.body?.cancel();
      } catch (error) {
        if (last || signal?.aborted) throw error;
      }
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, wait >= 0 ? wait : Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2));
        signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
      });
    }
  };
}
