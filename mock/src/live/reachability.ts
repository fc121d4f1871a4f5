// Live mode's first step: is there a Gitea API at the base URL at all? Gitea and Forgejo answer
// GET {base}/version with {"version": "1.27.1"}. When nothing answers there, or something else
// does, live mode stops before any operation with one line naming the cause (a usage error,
// exit 2): reporting every operation as a mismatch (exit 1) would blame the contract for a wrong
// address, a server that is down or a broken TLS set-up.
import { prefixHint, redact } from 'gitea-contract/internal';
import { networkFailure } from '../common/network-failure.js';
import { readBounded } from '../common/bytes.js';

export interface ProbeOptions {
  /**
   * The credentials the operations will send to the same base URL: with REQUIRE_SIGNIN_VIEW,
   * Gitea refuses /version to anonymous callers.
   */
  headers: Record<string, string>;
  /** The longest wait for the whole answer, connection and TLS included. */
  timeoutMs: number;
  /** The option that sets that wait, named when it passes (default `--connect-timeout`). */
  timeoutFlag?: string;
  /** Values never to show, should the server echo them back. */
  secrets: readonly string[];
  /**
   * The line for a `401` or `403`, from what was answered (`GET /version answered 401 …`): it
   * names the credentials sent, or says none were given. By default, that they were refused.
   */
  refused?: (answered: string) => string;
}

export type Probe = { ok: true; server: string } | { ok: false; problem: string };

/** The most of an answer read: a version is a few bytes, a wrong address may be a large page. */
const READ_LIMIT = 64 * 1024;
/** The most of an answer quoted in the line. */
const QUOTE_LIMIT = 80;

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

/** What may not show in a line: the credentials, should the server echo them. */
type Hide = (text: string) => string;

/** `text` redacted, then cut short: cut first, a secret's start would be left where it fell. */
function cut(text: string, hide: Hide): string {
  const shown = hide(text);
  return shown.length > QUOTE_LIMIT ? `${shown.slice(0, QUOTE_LIMIT)}…` : shown;
}

/** `text` on one line, redacted, cut short, quoted. */
function quote(text: string, hide: Hide): string {
  return JSON.stringify(cut(text.replace(/\s+/g, ' ').trim(), hide));
}

/** The start of a body, at most `limit` bytes, without waiting for the rest. */
async function readStart(response: Response, limit: number): Promise<string> {
  return Buffer.from((await readBounded(response.body, limit - 1)).bytes).toString('utf8');
}

/**
 * Why a request got no answer, as `CODE (what it means)`: `ECONNREFUSED (the connection was
 * refused: …)`, `TLS failed: CODE (reason)`, else the innermost message. For /version and for
 * every request after it alike.
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

/** What came back instead of a version, in a few words. */
function describeAnswer(response: Response, body: string, hide: Hide): string {
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (response.status >= 300 && response.status < 400)
    return `a redirect to ${cut(response.headers.get('location') ?? 'nowhere', hide)}`;
  if (body.trim() === '') return `an empty body${type ? ` (${type})` : ''}`;
  if (type === 'text/html' || /^\s*</.test(body)) {
    const title = /<title[^>]*>([^<]*)/i.exec(body)?.[1];
    return `an HTML page${title?.trim() ? ` titled ${quote(title, hide)}` : ''}`;
  }
  try {
    // Compact JSON is one line already.
    return `JSON ${cut(JSON.stringify(JSON.parse(body)), hide)}`;
  } catch {
    return `${type || 'a body without a content type'}: ${quote(body, hide)}`;
  }
}

/** The version in a Gitea answer to /version, else undefined. */
function versionIn(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    const version = parsed && typeof parsed === 'object' ? (parsed as { version?: unknown }).version : undefined;
    return typeof version === 'string' && version !== '' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Asks GET {baseUrl}/version: the server's name and version, or the one-line reason there is no Gitea API there. */
export async function probeServer(
  baseUrl: string,
  {
    headers,
    timeoutMs,
    timeoutFlag = '--connect-timeout',
    secrets,
    refused = (answered) => `${baseUrl} refused the credentials: ${answered}`,
  }: ProbeOptions,
): Promise<Probe> {
  const url = new URL(`${baseUrl.replace(/\/$/, '')}/version`);
  // Not AbortSignal.timeout: its timer does not keep the process alive, and when fetch hangs on a
  // connection the server closed as it opened, nothing else does: Node would exit 13, silently.
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const { signal } = timer;
  let response: Response;
  let body: string;
  try {
    // A redirect is reported, not followed: the base URL to give is the one it points to.
    response = await fetch(url, { headers, signal, redirect: 'manual' });
    body = await readStart(response, READ_LIMIT);
  } catch (error) {
    const cause = signal.aborted
      ? `ETIMEDOUT (no answer to GET /version within ${timeoutMs / 1000} s; ${timeoutFlag} waits longer)`
      : failureCause(error, url);
    return { ok: false, problem: redact(`cannot reach ${baseUrl}: ${cause}`, secrets) };
  } finally {
    clearTimeout(timeout);
  }
  const hide: Hide = (text) => redact(text, secrets);
  const version = response.ok ? versionIn(body) : undefined;
  if (version !== undefined) {
    // Forgejo 7 and later mark the Gitea release they track (`11.0.1+gitea-1.22.0`); older ones show as Gitea.
    const name = /\+gitea-\d/.test(version) ? 'Forgejo' : 'Gitea';
    return { ok: true, server: `${name} ${/^[\x21-\x7e]{1,100}$/.test(version) ? version : quote(version, hide)}` };
  }
  const answered = `GET /version answered ${response.status} with ${describeAnswer(response, body, hide)}`;
  // Gitea with REQUIRE_SIGNIN_VIEW answers 401 here to a missing or wrong credential.
  // Without /api/v1, /version is one of the web pages: the line says which base URL to try.
  const hint = prefixHint(baseUrl);
  const problem =
    response.status === 401 || response.status === 403
      ? refused(answered)
      : `no Gitea API at ${baseUrl}: ${answered}, not {"version": "…"}${hint ? `; ${hint}` : ''}`;
  return { ok: false, problem: redact(problem, secrets) };
}
