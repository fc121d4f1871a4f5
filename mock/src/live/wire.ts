// What live mode sends and reads: every answer kept whole up to 10 MB (the most the proxy checks),
// so it can be judged byte for byte; and the look-ups that find ids on the server's own listing
// routes, which say why they found none. A redirect is never followed by either.
import { redact } from 'gitea-contract/internal';
import type { Answer } from '../contract/conformance.js';
import type { Budget } from './budget.js';
import { failureCause } from './reachability.js';
import type { MissingKind } from './results.js';
import { readBounded } from '../common/bytes.js';

/** The most of an answer live mode reads: a server may send without end. */
const READ_LIMIT = 10 * 1024 * 1024;
export const TOO_LARGE = `body is larger than ${READ_LIMIT / 1024 / 1024} MB: not checked`;
/** Statuses whose answers have no body (a Response of one refuses any). */
const NULL_BODY = [204, 205, 304];

export type CapturedAnswer = Answer & { tooLarge: boolean };

/** The body, read straight from the stream (no copy to buffer the rest); undefined when over `limit`, the rest discarded. */
async function readAtMost(response: Response, limit: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const read = await readBounded(response.body, limit);
  return read.complete ? read.bytes : undefined;
}

export interface Capture {
  /** The fetch to give the client: it reads each answer whole before the client sees it. */
  fetch: typeof fetch;
  /** The last answer read whole since `forget()`, if any. */
  last(): CapturedAnswer | undefined;
  forget(): void;
}

export function createCapture(): Capture {
  let last: CapturedAnswer | undefined;
  return {
    last: () => last,
    forget: () => void (last = undefined),
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const { status, statusText, headers, url } = response;
      const bytes = await readAtMost(response, READ_LIMIT);
      last = { status, headers, body: bytes ? new TextDecoder().decode(bytes) : '', tooLarge: !bytes };
      // The client gets the bytes read, never the stream: an answer too large to check is an error.
      if (!bytes) throw new Error(TOO_LARGE);
      const answer = new Response(NULL_BODY.includes(status) ? null : bytes, { status, statusText, headers });
      Object.defineProperty(answer, 'url', { value: url });
      return answer;
    },
  };
}

/** Why a look-up found no record: what it was answered, or that it got no answer (a time-out, a failed connection). */
export interface Missing {
  missing: string;
  kind: MissingKind;
  /** The status of the answer, when there was one. */
  status?: number;
}

/** A record found on the server, or why none was. */
export type Found = { record: Record<string, unknown> } | Missing;

/** The `message` of a Gitea error body (`{"message": "…", "url": "…"}`), or '' when there is none. */
export function serverMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown } | null)?.message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
}

/** `status` and the server's message, redacted of `secrets`, then quoted and cut short: `401 "token is required"`. */
export function statusWithMessage(status: number, body: string, secrets: readonly string[]): string {
  const message = redact(serverMessage(body), secrets);
  return message
    ? `${status} ${JSON.stringify(message.length > 200 ? `${message.slice(0, 200)}…` : message)}`
    : String(status);
}

/**
 * The first record `GET {baseUrl}{path}` answers (the first item of a list, or the record itself),
 * within the run's budget, or why there is none: its status, an empty list, a time-out.
 */
export async function lookUp(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  budget: Budget,
  secrets: readonly string[],
): Promise<Found> {
  const asked = `GET ${path}`;
  const timer = budget.request();
  if (!timer) return { missing: `${asked} was not sent: ${budget.spent()}`, kind: 'timeout' };
  try {
    const url = `${baseUrl.replace(/\/$/, '')}${path}${path.includes('?') ? '&' : '?'}limit=1`;
    const response = await fetch(url, { headers, signal: timer.signal, redirect: 'manual' });
    const bytes = await readAtMost(response, READ_LIMIT);
    const text = bytes ? new TextDecoder().decode(bytes) : '';
    if (!response.ok)
      return {
        missing: `${asked} answered ${statusWithMessage(response.status, text, secrets)}`,
        kind: 'input',
        status: response.status,
      };
    if (!bytes) return { missing: `${asked} answered more than ${READ_LIMIT / 1024 / 1024} MB`, kind: 'input' };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { missing: `${asked} answered ${response.status} with a body that is not JSON`, kind: 'input' };
    }
    const record = Array.isArray(body) ? (body[0] as unknown) : body;
    if (record === null || typeof record !== 'object') return { missing: `${asked} listed none`, kind: 'input' };
    return { record: record as Record<string, unknown> };
  } catch (error) {
    const timedOut = timer.timedOut();
    if (timedOut) return { missing: `${asked} timed out: ${timedOut}`, kind: 'timeout' };
    return { missing: `${asked} failed: ${failureCause(error)}`, kind: 'network' };
  } finally {
    timer.done();
  }
}
