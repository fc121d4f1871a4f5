// CORS for browser apps: credentials work (the origin is echoed, never `*` with credentials),
// Gitea's own request headers are allowed, and the paging headers can be read.
import type { IncomingMessage } from 'node:http';

const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Gitea-OTP, Sudo, Prefer, Accept';
const EXPOSED_HEADERS = 'Link, X-Total-Count';
export const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/** Headers for every answer: only requests that carry an `Origin` are cross-origin. */
export function corsHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  if (origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin',
  };
}

/** A preflight is an OPTIONS request with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
}

export function preflightHeaders(req: IncomingMessage): Record<string, string> {
  return {
    ...corsHeaders(req),
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': '600',
    Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    'Content-Length': '0',
  };
}
