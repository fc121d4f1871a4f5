// CORS for browser apps: credentials work (the origin is echoed, never `*` with credentials),
// Gitea's own request headers and any other a preflight asks for are allowed (an app's own
// `X-Request-Id`, a tracing SDK's `traceparent`), and the paging headers can be read. The mock answers
// every origin: nothing real is at stake. In front of a real server (the proxy) a page of any
// origin could use the credentials and session of whoever browses it, so only the origins of
// this machine and those the user names are answered.
import { isLoopbackHost } from 'gitea-contract/internal';

/** A request header by its lower-case name, from a Fetch `Request` or a Node `IncomingMessage`. */
export type HeaderOf = (name: string) => string | undefined;

const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Gitea-OTP, Sudo, Prefer, Accept';
/** Longest `Access-Control-Request-Headers` echoed back: far above any app's (a browser lists each name once). */
const REQUEST_HEADERS_LIMIT = 2048;
/** A header name as HTTP defines it (RFC 9110 `token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const EXPOSED_HEADERS = 'Link, X-Total-Count';
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/** Whether a request's `Origin` may have CORS answers. */
export type OriginPolicy = (origin: string) => boolean;

/** `value` as an origin (`https://app.example.org`, `http://localhost:5173`), or why it is not one. */
export function checkOrigin(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // The message below says what to give.
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== value)
    throw new Error(
      `"${value}" is not an origin: give the scheme, host and port only, such as https://app.example.org`,
    );
  return value;
}

/** The origins of this machine (a dev server on localhost), and `origins` exactly as given. */
export function allowList(origins: readonly string[]): OriginPolicy {
  const named = new Set(origins.map(checkOrigin));
  return (origin) => {
    if (named.has(origin)) return true;
    try {
      const url = new URL(origin);
      return /^https?:$/.test(url.protocol) && url.origin === origin && isLoopbackHost(url.hostname);
    } catch {
      // `null` (a file or a sandboxed frame) and anything else that is not an origin.
      return false;
    }
  };
}

/** Headers for every answer: only requests that carry an `Origin` are cross-origin. */
export function corsHeaders(header: HeaderOf): Record<string, string> {
  const origin = header('origin');
  if (origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin',
  };
}

/** `cors` with `name` exposed too, so a browser page can read it (browsers hide every header CORS does not expose); unchanged without `Origin`. */
export function exposing(cors: Record<string, string>, name: string): Record<string, string> {
  const exposed = cors['Access-Control-Expose-Headers'];
  return exposed === undefined ? cors : { ...cors, 'Access-Control-Expose-Headers': `${exposed}, ${name}` };
}

/** The headers of a refusal that frees itself shortly (a bound on what is held at once): `cors`, and `Retry-After: 1` a page can read. */
export function retryShortly(cors: Record<string, string>): Record<string, string> {
  return { ...exposing(cors, 'Retry-After'), 'Retry-After': '1' };
}

/** A preflight is an OPTIONS request with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(method: string, header: HeaderOf): boolean {
  return (
    method === 'OPTIONS' && header('origin') !== undefined && header('access-control-request-method') !== undefined
  );
}

/**
 * The headers a preflight may send: Gitea's, and those the preflight asks for when its list is
 * header names only and not longer than REQUEST_HEADERS_LIMIT. Anything else gets Gitea's alone,
 * and the browser refuses the request, as it would a server that does not take those headers.
 */
function allowedHeaders(requested: string | undefined): string {
  if (requested === undefined || requested.length > REQUEST_HEADERS_LIMIT) return ALLOWED_HEADERS;
  const names = requested
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (!names.every((name) => HEADER_NAME.test(name))) return ALLOWED_HEADERS;
  const known = new Set(ALLOWED_HEADERS.toLowerCase().split(', '));
  const more = [...new Set(names.map((name) => name.toLowerCase()))].filter((name) => !known.has(name));
  return [ALLOWED_HEADERS, ...more].join(', ');
}

export function preflightHeaders(header: HeaderOf): Record<string, string> {
  return {
    ...corsHeaders(header),
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': allowedHeaders(header('access-control-request-headers')),
    'Access-Control-Max-Age': '600',
    Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    'Content-Length': '0',
  };
}
