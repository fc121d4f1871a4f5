// Errors the client throws. Credentials never reach them: no request object, no headers we
// sent, and every secret the client knows is scrubbed from what the server sends back.
import { redact, scrub } from './redact.js';

/** What the client knows of the request an error belongs to. */
export interface RequestInfo {
  method: string;
  /** The request URL, with `token`/`access_token` query values redacted. */
  url: string;
  /** The path template, such as `/repos/{owner}/{repo}/hooks/{id}`. */
  path: string;
  operationId: string | undefined;
}

/** A non-2xx answer, or a 2xx answer whose body cannot be read, from the server. */
export class ApiError extends Error implements RequestInfo {
  declare readonly status: number;
  declare readonly method: string;
  declare readonly url: string;
  declare readonly path: string;
  declare readonly operationId: string | undefined;
  /** The response headers. */
  declare readonly headers: Headers;
  /** The parsed body: the service's `{message, url}`, a string, `null`, or `undefined` when empty. */
  declare readonly body: unknown;

  constructor(status: number, message: string, info: RequestInfo, headers: Headers, body: unknown) {
    super(`${info.method} ${info.path}${info.operationId ? ` (${info.operationId})` : ''}: ${status} ${message}`);
    Object.assign(this, info, { name: 'ApiError', status, headers, body });
  }

  toJSON(): object {
    return { ...this, message: this.message, headers: Object.fromEntries(this.headers) };
  }
}

/** Thrown when a request, retries included, takes longer than `timeoutMs`. */
export class TimeoutError extends Error {}
TimeoutError.prototype.name = 'TimeoutError';

/** The error for an answer: the message of the service's error body, else the body text or status text; secrets redacted throughout. */
export function toApiError(response: Response, body: unknown, info: RequestInfo, secrets: readonly string[]): ApiError {
  const message = (body as { message?: unknown } | null)?.message ?? (typeof body === 'string' && body.trim()) ?? '';
  return new ApiError(response.status, redact(String(message || response.statusText || 'error'), secrets), info, scrub(response.headers, secrets), scrub(body, secrets));
}
