// The bytes of request bodies a server holds at once, across its requests: each body is read to
// at most MAX_BODY_BYTES, and what every request being read or waiting for its answer (a delay, a
// slow upstream) holds together stays within one budget. Every reader of request bodies takes its
// bytes from the same budget as they arrive (body.ts for the front, the proxy's collect), and a
// request gives them back when it ends, so a flood of large or withheld bodies cannot take the
// process's memory. Past the budget a request is answered 503 with `Retry-After`: the bytes come
// back as other requests end, and the same body fits a moment later; a body larger than the whole
// budget can never fit, and is answered 413.

/** The most one request body may hold, in every mode. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Why a body's bytes were refused: its answer, in the service's error dialect. */
export interface BodyRefusal {
  status: 413 | 503;
  message: string;
}

/** One request's share of the budget. */
export interface BodyReading {
  /** Takes `bytes` more for this request; the refusal when they do not fit, and then this request holds nothing. */
  take(bytes: number): BodyRefusal | undefined;
  /** Gives back what this request holds, for good: it takes nothing after. */
  release(): void;
  /** The refusal of a body declared this long, which can never fit, before a byte of it is read. */
  declared(length: number): BodyRefusal | undefined;
}

export interface BodyBudget {
  /** The bytes all requests may hold together. */
  readonly limit: number;
  /** A share for one request, holding nothing yet. */
  reading(): BodyReading;
}

/**
 * The default budget: an eighth of V8's heap, as the sandbox's writes in progress get another
 * eighth and its worlds half (sandbox-limits.ts), and never less than two bodies of
 * MAX_BODY_BYTES (the proxy reads a chunk past it before it streams the rest). Without a known
 * heap (a browser), bodies are bounded one by one only.
 */
export function defaultBodyBudget(heapLimit: number | undefined): number {
  return heapLimit === undefined ? Infinity : Math.max(2 * MAX_BODY_BYTES, Math.floor(heapLimit / 8));
}

export function createBodyBudget(limit: number): BodyBudget {
  if (!(limit >= 1)) throw new TypeError('the budget of request bodies in flight must be one byte or more');
  let held = 0;
  const tooLarge = (): BodyRefusal => ({
    status: 413,
    message: `request body exceeds the ${limit} bytes of request bodies this server holds at once`,
  });
  const full: BodyRefusal = {
    status: 503,
    message: `request bodies being read or held take the ${limit} bytes this server holds at once; try again shortly`,
  };
  return {
    limit,
    reading() {
      let mine = 0;
      let over = false;
      const release = (): void => {
        held -= mine;
        mine = 0;
        over = true;
      };
      return {
        take(bytes) {
          if (over) return full;
          if (mine + bytes > limit) {
            release();
            return tooLarge();
          }
          if (held + bytes > limit) {
            release();
            return full;
          }
          mine += bytes;
          held += bytes;
          return undefined;
        },
        release,
        declared: (length) => (length > limit ? tooLarge() : undefined),
      };
    },
  };
}
