// Live mode's first step: is there a Gitea API at the base URL at all? Gitea and Forgejo answer
// GET {base}/version with {"version": "1.27.1"}. When nothing answers there, or something else
// does, live mode stops before any operation with one line naming the cause (exit 2): a mismatch
// per operation (exit 1) would blame the contract for a wrong address, a server down, a broken TLS.
import { prefixHint } from 'gitea-contract/internal';
import { redact } from '../common/redaction.js';
import { readBounded } from '../common/bytes.js';
import { failureCause } from './wire.js';

export interface ProbeOptions {
  /** The credentials the operations will send: with REQUIRE_SIGNIN_VIEW, Gitea refuses /version to anonymous callers. */
  headers: Record<string, string>;
  /** The longest wait for the whole answer, connection and TLS included, and the option that sets it. */
  timeoutMs: number;
  timeoutFlag: string;
  /** Values never to show, should the server echo them back. */
  secrets: readonly string[];
  /** The line for a `401` or `403`, from what was answered (`GET /version answered 401 …`). */
  refused: (answered: string) => string;
}

export type Probe = { ok: true; server: string } | { ok: false; problem: string };

/** The most of an answer read: a version is a few bytes, a wrong address may be a large page. */
const READ_LIMIT = 64 * 1024;
/** The most of an answer quoted in the line. */
const QUOTE_LIMIT = 80;

/** What may not show in a line: the credentials, should the server echo them. */
type Hide = (text: string) => string;

/** `text` redacted, then cut short: cut first, a secret's start would be left where it fell. */
function cut(text: string, hide: Hide): string {
  const shown = hide(text);
  return shown.length > QUOTE_LIMIT ? `${shown.slice(0, QUOTE_LIMIT)}…` : shown;
}

/** `text` on one line, redacted, cut short, quoted. */
const quote = (text: string, hide: Hide): string => JSON.stringify(cut(text.replace(/\s+/g, ' ').trim(), hide));

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
    const version = (JSON.parse(body) as { version?: unknown } | null)?.version;
    return typeof version === 'string' && version !== '' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Asks GET {baseUrl}/version: the server's name and version, or the one-line reason there is no Gitea API there. */
export async function probeServer(baseUrl: string, options: ProbeOptions): Promise<Probe> {
  const { headers, timeoutMs, secrets } = options;
  const hide: Hide = (text) => redact(text, secrets);
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
    body = Buffer.from((await readBounded(response.body, READ_LIMIT)).bytes).toString('utf8');
  } catch (error) {
    const cause = signal.aborted
      ? `ETIMEDOUT (no answer to GET /version within ${timeoutMs / 1000} s; ${options.timeoutFlag} waits longer)`
      : failureCause(error, url);
    return { ok: false, problem: hide(`cannot reach ${baseUrl}: ${cause}`) };
  } finally {
    clearTimeout(timeout);
  }
  const version = response.ok ? versionIn(body) : undefined;
  if (version !== undefined) {
    // Forgejo 7 and later mark the Gitea release they track (`11.0.1+gitea-1.22.0`); older ones show as Gitea.
    const name = /\+gitea-\d/.test(version) ? 'Forgejo' : 'Gitea';
    return { ok: true, server: `${name} ${/^[\x21-\x7e]{1,100}$/.test(version) ? version : quote(version, hide)}` };
  }
  const answered = `GET /version answered ${response.status} with ${describeAnswer(response, body, hide)}`;
  // 401 or 403: REQUIRE_SIGNIN_VIEW and a missing or wrong credential. Without /api/v1, /version
  // is one of the web pages: the line says which base URL to try.
  const hint = prefixHint(baseUrl);
  const problem =
    response.status === 401 || response.status === 403
      ? options.refused(answered)
      : `no Gitea API at ${baseUrl}: ${answered}, not {"version": "…"}${hint ? `; ${hint}` : ''}`;
  return { ok: false, problem: hide(problem) };
}
