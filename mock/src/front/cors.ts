// CORS, credentials included: the mock answers every origin; the proxy only this machine's and those the user names.
import { isLoopbackHost } from 'gitea-contract/internal';

export type HeaderOf = (name: string) => string | undefined;

const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Gitea-OTP, Sudo, Prefer, Accept';
/** Forgejo reads its own one-time code header first (services/auth/basic.go). */
const FORGEJO_HEADERS = `${ALLOWED_HEADERS}, X-Forgejo-OTP`;
const LISTED = new Set(FORGEJO_HEADERS.toLowerCase().split(', '));
/** Far above any app's (a browser lists each name once). */
const REQUEST_HEADERS_LIMIT = 2048;
// RFC 9110 `token`
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function originUrl(value: string): URL | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return url && /^https?:$/.test(url.protocol) && url.origin === value ? url : undefined;
}

export function checkOrigin(value: string): string {
  if (!originUrl(value))
    throw new Error(
      `"${value}" is not an origin: give the scheme, host and port only, such as https://app.example.org`,
    );
  return value;
}

/** This machine's origins (a dev server on localhost), and `origins`. */
export function allowList(origins: readonly string[]): (origin: string) => boolean {
  const named = new Set(origins.map(checkOrigin));
  // `null` (a file or a sandboxed frame) is no origin.
  return (origin) => named.has(origin) || isLoopbackHost(originUrl(origin)?.hostname ?? '');
}

export function corsHeaders(header: HeaderOf): Record<string, string> {
  const origin = header('origin');
  if (origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Expose-Headers': 'Link, X-Total-Count',
    Vary: 'Origin',
  };
}

export function exposing(cors: Record<string, string>, name: string): Record<string, string> {
  const exposed = cors['Access-Control-Expose-Headers'];
  return exposed === undefined ? cors : { ...cors, 'Access-Control-Expose-Headers': `${exposed}, ${name}` };
}

export function retryShortly(cors: Record<string, string>): Record<string, string> {
  return { ...exposing(cors, 'Retry-After'), 'Retry-After': '1' };
}

export const isPreflight = (method: string, header: HeaderOf): boolean =>
  method === 'OPTIONS' && header('origin') !== undefined && header('access-control-request-method') !== undefined;

/** Echoes the headers asked for when they are names only; else the browser refuses the request. `forgejo`: as a Forgejo profile, whose OTP header is listed too. */
export function preflightHeaders(header: HeaderOf, forgejo = false): Record<string, string> {
  const requested = header('access-control-request-headers') ?? '';
  const names = requested.split(',').flatMap((name) => name.trim() || []);
  const echoed = requested.length <= REQUEST_HEADERS_LIMIT && names.every((name) => HEADER_NAME.test(name));
  const more = echoed ? [...new Set(names.map((name) => name.toLowerCase()))].filter((name) => !LISTED.has(name)) : [];
  return {
    ...corsHeaders(header),
    'Access-Control-Allow-Methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': [forgejo ? FORGEJO_HEADERS : ALLOWED_HEADERS, ...more].join(', '),
    'Access-Control-Max-Age': '600',
    Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    'Content-Length': '0',
  };
}
