// Gitea's error dialect, for every answer the mock makes up itself.
import type { Answer } from './app.js';

/** Gitea's `APIError`. */
export const apiError = (docsUrl: string, message: string) => ({ message, url: docsUrl });

export const JSON_TYPE = 'application/json;charset=utf-8';

export function errorAnswer(docsUrl: string, status: number, message: string, headers?: Answer['headers']): Answer {
  return { status, type: 'application/json', body: apiError(docsUrl, message), own: true, ...(headers && { headers }) };
}

export function notAllowed(docsUrl: string, method: string, path: string, allowed: readonly string[]): Answer {
  const allow = allowed.join(', ');
  return errorAnswer(docsUrl, 405, `${method} is not allowed on ${path}; allowed: ${allow}`, { Allow: allow });
}

export const bugMessage = (problem: string): string => `${problem}; this is a bug in gitea-mock`;
export const MOCK_FAILURE = bugMessage('the mock failed to answer');

/** The path only: a query may carry `token=`. */
export function failureLine(method: string | undefined, url: string | undefined, error: unknown): string {
  return `mock failure on ${method} ${url?.split('?')[0]}: ${error instanceof Error ? error.stack : String(error)}`;
}

// Go's net/http `http.StatusText`
const REASONS = new Map(
  `200 OK, 201 Created, 202 Accepted, 204 No Content, 205 Reset Content, 301 Moved Permanently, 302 Found,
  307 Temporary Redirect, 400 Bad Request, 401 Unauthorized, 403 Forbidden, 404 Not Found, 405 Method Not Allowed,
  406 Not Acceptable, 408 Request Timeout, 409 Conflict, 413 Request Entity Too Large, 415 Unsupported Media Type,
  417 Expectation Failed, 422 Unprocessable Entity, 423 Locked, 431 Request Header Fields Too Large,
  500 Internal Server Error, 503 Service Unavailable`
    .split(/,\s+/)
    .map((entry): [number, string] => [Number(entry.slice(0, 3)), entry.slice(4)]),
);

export const reasonPhrase = (status: number): string => REASONS.get(status) ?? '';
