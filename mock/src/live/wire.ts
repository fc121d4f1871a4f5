// What live mode sends and reads: the time each request may take; every answer kept whole up to
// 10 MB (the most the proxy checks), to be judged byte for byte; the look-ups that find ids on the
// server's listing routes; whether an answer refuses the credentials. No redirect is followed.
import { redact } from '../common/redaction.js';
import { networkFailure } from '../common/network-failure.js';
import type { Answer } from '../contract/conformance.js';
import type { MissingKind } from './results.js';
import { readBounded } from '../common/bytes.js';

/** The most of an answer live mode reads: a server may send without end. */
const READ_LIMIT = 10 * 1024 * 1024;
export const TOO_LARGE = `body is larger than ${READ_LIMIT / 1024 / 1024} MB: not checked`;
/** Statuses whose answers have no body (a Response of one refuses any). */
const NULL_BODY = [204, 205, 304];

export type CapturedAnswer = Answer & { tooLarge: boolean };

/**
 * The time live mode may take: the whole run (--timeout) and each request (--request-timeout),
 * whichever ends first. `spent` says why nothing more may be sent; a request's timer aborts its
 * `signal` when its time is up, says why (`timedOut`), and stops once its answer is read (`done`).
 */
export function createBudget(runMs: number, requestMs: number) {
  const ends = performance.now() + runMs;
  const ranOut = `the run's --timeout of ${runMs / 1000} s ran out`;
  const left = (): number => Math.max(0, ends - performance.now());
  return {
    spent: () => (left() > 0 ? undefined : ranOut),
    request(): { signal: AbortSignal; timedOut(): string | undefined; done(): void } | undefined {
      const remaining = left();
      if (remaining <= 0) return undefined;
      const reason = remaining < requestMs ? ranOut : `no answer within the --request-timeout of ${requestMs / 1000} s`;
      const controller = new AbortController();
      // Not AbortSignal.timeout: its timer does not keep the process alive, and a fetch hung on a
      // closed connection would let Node exit 13 without a word.
      const timer = setTimeout(() => controller.abort(new Error(reason)), Math.min(remaining, requestMs));
      return {
        signal: controller.signal,
        timedOut: () => (controller.signal.aborted ? reason : undefined),
        done: () => clearTimeout(timer),
      };
    },
  };
}

export type Budget = ReturnType<typeof createBudget>;

/** What each code means for someone who typed a base URL. */
const MEANINGS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused: is the server running, on that port?',
  ECONNRESET: 'the connection was reset before an answer',
  EPIPE: 'the connection was closed while sending',
  UND_ERR_SOCKET: 'the connection was closed before an answer',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
};

/**
 * Why a request got no answer: `ECONNREFUSED (the connection was refused: …)`, `TLS failed:
 * CODE (reason)`, else the innermost message; for /version (`url`) and every request after it.
 */
export function failureCause(error: unknown, url?: URL): string {
  const { code, tls, advice, message } = networkFailure(error);
  // Fetch refuses, without a code, the ports the Fetch standard blocks (9, 25, 6000 …).
  if (message === 'bad port' && url)
    return `fetch refuses port ${url.port}, which the Fetch standard blocks: use another port`;
  if (tls) return `TLS failed: ${code} (${tls}${advice ? `: ${advice}` : ''})`;
  if (code) return `${code} (${MEANINGS[code] ?? message})`;
  return message;
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
      const { bytes, complete } = await readBounded(response.body, READ_LIMIT);
      last = { status, headers, body: complete ? new TextDecoder().decode(bytes) : '', tooLarge: !complete };
      // The client gets the bytes read, never the stream: an answer too large to check is an error.
      if (!complete) throw new Error(TOO_LARGE);
      const answer = new Response(NULL_BODY.includes(status) ? null : bytes, { status, statusText, headers });
      Object.defineProperty(answer, 'url', { value: url });
      return answer;
    },
  };
}

/** Why a look-up found no record: what it was answered (`status`, when it was), or that it got no answer. */
export interface Missing {
  missing: string;
  kind: MissingKind;
  status?: number;
}

/** A record found on the server, or why none was. */
export type Found = { record: Record<string, unknown> } | Missing;

/** The `message` of a Gitea error body (`{"message": "…", "url": "…"}`), or '' when there is none. */
function serverMessage(body: string): string {
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
    const { bytes, complete } = await readBounded(response.body, READ_LIMIT);
    const text = complete ? new TextDecoder().decode(bytes) : '';
    const { status } = response;
    if (!response.ok)
      return { missing: `${asked} answered ${statusWithMessage(status, text, secrets)}`, kind: 'input', status };
    if (!complete) return { missing: `${asked} answered more than ${READ_LIMIT / 1024 / 1024} MB`, kind: 'input' };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { missing: `${asked} answered ${status} with a body that is not JSON`, kind: 'input' };
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

// An answer that refuses the credentials says nothing of the operation. Gitea answers 401 only for
// missing or wrong credentials, on every route alike, since it authenticates before routing
// (routers/api/v1/api.go `apiAuth`, `reqToken`); a few 403s refuse the account the same way
// (`verifyAuthWithOptions`): those end the run. A token that lacks the scope one operation needs
// gets a 403 for that operation only (`tokenRequiresScopes`, `checkTokenPublicOnly`): it is skipped.

/** The 403 messages of a token that lacks a scope, or is limited to public resources. */
const SCOPE = /^(token does not have at least one of required scope|token scope is limited to public )/;
/** The 403 messages of an account that may not use the API at all. */
const ACCOUNT =
  /^(This account is not activated\.|This account is prohibited from signing in|You must change your password\.|Only signed in user is allowed to call APIs\.)/;

/** How `answer` refuses the credentials: for `everywhere`, or this `operation` only (a scope); undefined when it is an answer to judge. */
export function refusalIn(answer: Answer): 'everywhere' | 'operation' | undefined {
  if (answer.status === 401) return 'everywhere';
  if (answer.status !== 403) return undefined;
  const message = serverMessage(answer.body);
  if (ACCOUNT.test(message)) return 'everywhere';
  if (SCOPE.test(message)) return 'operation';
  return undefined;
}
