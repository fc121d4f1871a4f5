// Errors the client throws. Credentials never reach them: no request object and no headers we
// sent, and the client scrubs every secret it knows from what the server sent back.
import { operationIdOf } from '../generated/operation-ids.js';

/** What the client knows of the request an error belongs to. */
interface RequestInfo {
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

  /**
   * The answer to `method` on the path template `path`; `message`: the service's message, else the
   * body text, else the status text; `hint`, a sentence on the likely cause, follows it.
   */
  constructor(method: string, path: string, response: Response, body: unknown, message?: string, hint?: string) {
    const { status, url, headers } = response;
    const operationId = operationIdOf(`${method} ${path}`);
    message ||= String(
      ((body as { message?: unknown } | null)?.message ?? (typeof body === 'string' && body.trim())) ||
        response.statusText ||
        'error',
    );
    if (hint) message += `; ${hint}`;
    // A browser's opaque redirect has status 0, which says nothing.
    super(`${method} ${path}${operationId ? ` (${operationId})` : ''}: ${status ? `${status} ` : ''}${message}`);
    Object.assign(this, { name: 'ApiError', method, path, url, operationId, status, headers, body });
  }

  toJSON(): object {
    return { ...this, message: this.message, headers: Object.fromEntries(this.headers) };
  }
}

/** Thrown when a request, retries included, takes longer than `timeoutMs`. */
export class TimeoutError extends Error {}
TimeoutError.prototype.name = 'TimeoutError';

/** Why a webhook delivery was refused: no signature, a wrong one, a payload that cannot be read, or one too large. */
export type WebhookErrorCode = 'missing-signature' | 'bad-signature' | 'malformed' | 'too-large';

/** A webhook delivery `parseWebhook` refuses, with the status an app may answer it with (401, 400, 413). */
export class WebhookError extends Error {
  // A field, not an assignment to the prototype: an app that never reads webhooks bundles none of this.
  override readonly name = 'WebhookError';
  constructor(
    readonly status: 400 | 401 | 413,
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
  }
}
