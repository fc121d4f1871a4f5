// Every answer the mock makes up itself uses the service's error bodies, so client code handles
// the mock and a real Gitea the same way.
import type { ServerResponse } from 'node:http';

export interface ErrorBody {
  message: string;
  url: string;
}

export interface NotFoundBody extends ErrorBody {
  errors: string[] | null;
}

/** Gitea's `APIError`: `{message, url}` where `url` is the server's API documentation. */
export function apiError(docsUrl: string, message: string): ErrorBody {
  return { message, url: docsUrl };
}

/** Gitea's `APIErrorNotFound` as 1.25 to 1.27.0-dev send it. */
export function notFound(docsUrl: string, message = 'not found'): NotFoundBody {
  return { errors: null, message, url: docsUrl };
}

export const JSON_TYPE = 'application/json;charset=utf-8';

/** Sends a JSON body the way an official Gitea build does (Go's JSON v2): compact, no trailing newline, with nosniff. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    ...headers,
    'Content-Type': JSON_TYPE,
    'Content-Length': String(payload.length),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(payload);
}

/** A raw HTTP/1.1 error for sockets Node's parser gave up on, where no ServerResponse exists. */
export function rawErrorResponse(
  status: number,
  reason: string,
  body: ErrorBody,
  headers: readonly string[] = [],
): string {
  const payload = JSON.stringify(body);
  return [
    `HTTP/1.1 ${status} ${reason}`,
    ...headers,
    `Content-Type: ${JSON_TYPE}`,
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    payload,
  ].join('\r\n');
}
