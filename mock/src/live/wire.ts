// What live mode sends and reads: credentials, the probe of /version, time limits, answers, look-ups.
import type { Auth } from 'gitea-contract';
import { authorization, prefixHint } from 'gitea-contract/internal';
import { readBounded, utf8Text } from '../common/bytes.js';
import { networkFailure } from '../common/network-failure.js';
import { redact } from '../common/redaction.js';
import type { Answer } from '../contract/conformance.js';

/** The most of an answer live mode reads: a server may send without end. */
const READ_LIMIT = 10 * 1024 * 1024;
export const TOO_LARGE = `body is larger than ${READ_LIMIT / 1024 / 1024} MB: not checked`;
/** Statuses whose answers have no body (a Response of one refuses any). */
const NULL_BODY = [204, 205, 304];

export type CapturedAnswer = Answer & { tooLarge: boolean };
/** Why a look-up found nothing to use: the server's data (`input`), or no answer (`timeout`, `network`). */
export type MissingKind = 'input' | 'timeout' | 'network';

/** Why a look-up found no record: what it was answered (`status`, when it was), or that it got none. */
export interface Missing {
  missing: string;
  kind: MissingKind;
  status?: number;
}

export type Found = { record: Record<string, unknown> } | Missing;

async function readText(response: Response, limit: number): Promise<{ text: string; complete: boolean }> {
  const { bytes, complete } = await readBounded(response.body, limit);
  return { text: utf8Text(bytes), complete };
}

function jsonString(body: string, field: string): string | undefined {
  try {
    const value = (JSON.parse(body) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** From GITEA_TOKEN, else GITEA_USERNAME and GITEA_PASSWORD (and GITEA_OTP); a refusal's line names the variables
 * `sent`, and those set but `unsent` and why, so the one to fix is plain. */
export function readCredentials(env: Record<string, string | undefined>) {
  const { GITEA_TOKEN: token, GITEA_USERNAME: username, GITEA_PASSWORD: password, GITEA_OTP: otp } = env;
  const auth: Auth | undefined = token
    ? { token }
    : username && password
      ? { username, password, ...(otp ? { otp } : {}) }
      : undefined;
  const headers: Record<string, string> = auth ? { Authorization: authorization(auth) } : {};
  const secrets = auth
    ? [
        headers.Authorization!,
        headers.Authorization!.slice(6),
        'token' in auth ? auth.token : auth.password,
        ...('otp' in auth && typeof auth.otp === 'string' ? [auth.otp] : []),
      ]
    : [];
  const basicNames = `GITEA_USERNAME${otp ? ', GITEA_PASSWORD and GITEA_OTP' : ' and GITEA_PASSWORD'}`;
  let unsent: string | undefined;
  if (token && (username || password))
    unsent = `${[username && 'GITEA_USERNAME', password && 'GITEA_PASSWORD'].filter(Boolean).join(' and ')}, set too but not sent: GITEA_TOKEN goes first`;
  else if (!auth && (username || password))
    unsent = `${username ? 'GITEA_USERNAME' : 'GITEA_PASSWORD'} is set without ${username ? 'GITEA_PASSWORD' : 'GITEA_USERNAME'}, so neither was sent`;
  return { auth, headers, secrets, sent: token ? 'GITEA_TOKEN' : auth ? basicNames : undefined, unsent };
}

export type Credentials = ReturnType<typeof readCredentials>;

/** The line for a server that refused the credentials, or asked for some when none were given. */
export function refusedLine(baseUrl: string, credentials: Credentials, answered: string): string {
  const { sent, unsent } = credentials;
  if (!sent)
    return `${baseUrl} asks for credentials and none were given (${unsent ? `${unsent}; ` : ''}set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): ${answered}`;
  return `${baseUrl} refused the credentials in ${sent}${unsent ? ` (${unsent})` : ''}: ${answered}`;
}

/** The whole run (--timeout) and each request (--request-timeout), whichever ends first; `spent` says why nothing
 * more may be sent, a request's `timedOut` why its signal was aborted. */
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
      // Not AbortSignal.timeout: a fetch hung on a closed connection would let Node exit 13 without a word.
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

/** Why a request got no answer: `ECONNREFUSED (the connection was refused: …)`, `TLS failed: CODE (reason)`, else the innermost message. */
export function failureCause(error: unknown, url?: URL): string {
  const { code, tls, advice, message } = networkFailure(error);
  // Fetch refuses, without a code, the ports the Fetch standard blocks (9, 25, 6000 …).
  if (message === 'bad port' && url)
    return `fetch refuses port ${url.port}, which the Fetch standard blocks: use another port`;
  if (tls) return `TLS failed: ${code} (${tls}${advice ? `: ${advice}` : ''})`;
  if (code) return `${code} (${MEANINGS[code] ?? message})`;
  return message;
}

/** A version is a few bytes, a wrong address may be a large page. */
const PROBE_READ_LIMIT = 64 * 1024;
const QUOTE_LIMIT = 80;

/** GET {baseUrl}/version: the server's name and version, or the one-line reason there is no Gitea API there. */
export async function probeServer(
  baseUrl: string,
  credentials: Credentials,
  timeoutMs: number,
  timeoutFlag: string,
): Promise<{ ok: true; server: string } | { ok: false; problem: string }> {
  const hide = (text: string): string => redact(text, credentials.secrets);
  // Redacted, then cut short: cut first, a secret's start would be left where it fell.
  const cut = (text: string): string => {
    const shown = hide(text);
    return shown.length > QUOTE_LIMIT ? `${shown.slice(0, QUOTE_LIMIT)}…` : shown;
  };
  const quote = (text: string): string => JSON.stringify(cut(text.replace(/\s+/g, ' ').trim()));
  const url = new URL(`${baseUrl.replace(/\/$/, '')}/version`);
  const timer = createBudget(timeoutMs, timeoutMs).request()!;
  let response: Response;
  let body: string;
  try {
    // A redirect is reported, not followed: the base URL to give is the one it points to. With
    // REQUIRE_SIGNIN_VIEW, Gitea refuses /version to anonymous callers: the credentials go along.
    response = await fetch(url, { headers: credentials.headers, signal: timer.signal, redirect: 'manual' });
    body = (await readText(response, PROBE_READ_LIMIT)).text;
  } catch (error) {
    const cause = timer.timedOut()
      ? `ETIMEDOUT (no answer to GET /version within ${timeoutMs / 1000} s; ${timeoutFlag} waits longer)`
      : failureCause(error, url);
    return { ok: false, problem: hide(`cannot reach ${baseUrl}: ${cause}`) };
  } finally {
    timer.done();
  }
  const version = response.ok ? jsonString(body, 'version') : undefined;
  if (version) {
    // Forgejo 7 and later mark the Gitea release they track (`11.0.1+gitea-1.22.0`); older ones show as Gitea.
    const name = /\+gitea-\d/.test(version) ? 'Forgejo' : 'Gitea';
    return { ok: true, server: `${name} ${/^[\x21-\x7e]{1,100}$/.test(version) ? version : quote(version)}` };
  }
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  let instead: string;
  if (response.status >= 300 && response.status < 400)
    instead = `a redirect to ${cut(response.headers.get('location') ?? 'nowhere')}`;
  else if (body.trim() === '') instead = `an empty body${type ? ` (${type})` : ''}`;
  else if (type === 'text/html' || /^\s*</.test(body)) {
    const title = /<title[^>]*>([^<]*)/i.exec(body)?.[1];
    instead = `an HTML page${title?.trim() ? ` titled ${quote(title)}` : ''}`;
  } else
    try {
      // Compact JSON is one line already.
      instead = `JSON ${cut(JSON.stringify(JSON.parse(body)))}`;
    } catch {
      instead = `${type || 'a body without a content type'}: ${quote(body)}`;
    }
  const answered = `GET /version answered ${response.status} with ${instead}`;
  // 401 or 403: REQUIRE_SIGNIN_VIEW and a missing or wrong credential. Without /api/v1, /version is a web page.
  const hint = prefixHint(baseUrl);
  const problem =
    response.status === 401 || response.status === 403
      ? refusedLine(baseUrl, credentials, answered)
      : `no Gitea API at ${baseUrl}: ${answered}, not {"version": "…"}${hint ? `; ${hint}` : ''}`;
  return { ok: false, problem: hide(problem) };
}

/** The client's fetch, which reads each answer whole before the client sees it, and the last answer read. */
export function createCapture() {
  let last: CapturedAnswer | undefined;
  return {
    last: () => last,
    forget: () => void (last = undefined),
    fetch: (async (input, init) => {
      const response = await fetch(input, init);
      const { status, statusText, headers, url } = response;
      const { bytes, complete } = await readBounded(response.body, READ_LIMIT);
      last = { status, headers, body: complete ? utf8Text(bytes) : '', tooLarge: !complete };
      // The client gets the bytes read, never the stream: an answer too large to check is an error.
      if (!complete) throw new Error(TOO_LARGE);
      const answer = new Response(NULL_BODY.includes(status) ? null : bytes, { status, statusText, headers });
      Object.defineProperty(answer, 'url', { value: url });
      return answer;
    }) as typeof fetch,
  };
}

/** `401 "token is required"`: the message redacted, then cut short. */
export function statusWithMessage(status: number, body: string, secrets: readonly string[]): string {
  const message = redact(jsonString(body, 'message') ?? '', secrets);
  return message
    ? `${status} ${JSON.stringify(message.length > 200 ? `${message.slice(0, 200)}…` : message)}`
    : String(status);
}

/** The first record `GET {baseUrl}{path}` answers (the first of a list, or the record itself), or why there is none. */
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
    const { text, complete } = await readText(response, READ_LIMIT);
    const { status } = response;
    if (!response.ok)
      return {
        missing: `${asked} answered ${statusWithMessage(status, complete ? text : '', secrets)}`,
        kind: 'input',
        status,
      };
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

// Gitea answers 401 only for missing or wrong credentials, on every route, authenticating before routing
// (routers/api/v1/api.go `apiAuth`, `reqToken`), and a few 403s refuse the account (`verifyAuthWithOptions`): the
// run ends. A token without a scope gets a 403 for one operation (`tokenRequiresScopes`, `checkTokenPublicOnly`).
const SCOPE = /^(token does not have at least one of required scope|token scope is limited to public )/;
const ACCOUNT =
  /^(This account is not activated\.|This account is prohibited from signing in|You must change your password\.|Only signed in user is allowed to call APIs\.)/;

/** How `answer` refuses the credentials: `everywhere`, or for this `operation` (a scope); undefined: one to judge. */
export function refusalIn(answer: Answer): 'everywhere' | 'operation' | undefined {
  if (answer.status === 401) return 'everywhere';
  if (answer.status !== 403) return undefined;
  const message = jsonString(answer.body, 'message') ?? '';
  if (ACCOUNT.test(message)) return 'everywhere';
  if (SCOPE.test(message)) return 'operation';
  return undefined;
}
