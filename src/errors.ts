// Errors the client throws. Credentials never reach them: no request object, no headers we
// sent, and every secret the client knows is scrubbed from what the server sends back.

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

/** Replaces each secret (as written and as escaped inside JSON); very short ones match too much. */
export function redact(text: string, secrets: readonly string[]): string {
  for (const secret of secrets) {
    for (const form of [secret, JSON.stringify(secret).slice(1, -1)]) if (form.length > 3) text = text.split(form).join('[REDACTED]');
  }
  return text.replace(/([?&](access_)?token=)[^&#"]*/gi, '$1[REDACTED]');
}

/** The error for an answer: the message of the service's error body, else the body text or status text. */
export function toApiError(response: Response, body: unknown, info: RequestInfo, secrets: readonly string[]): ApiError {
  const message = (body as { message?: unknown } | null)?.message ?? (typeof body === 'string' && body.trim()) ?? '';
  const clean = body === undefined ? body : (JSON.parse(redact(JSON.stringify(body), secrets)) as unknown);
  return new ApiError(response.status, redact(String(message || response.statusText || 'error'), secrets), info, response.headers, clean);
}
