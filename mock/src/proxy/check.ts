// The proxy's check of an exchange; one that found nothing is remembered by a SHA-256 of all it read, not the bytes.
import { createHash, hash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { CREDENTIAL_HEADER } from 'gitea-contract/internal';
import { redact } from '../common/redaction.js';
import { describeViolation } from '../contract/conformance.js';
import { clip, createExchangeReport, LINE_CHARS, total, type Found } from '../contract/exchange-report.js';
import { BASE_PATH } from '../front/app.js';
import { checkAuthorization, oneTimeCode } from '../front/auth.js';
import { bugMessage } from '../front/errors.js';
import type { MockOperation, OperationTable } from '../front/operations.js';
import { LISTED_VIOLATIONS, queryOf, requestViolations, type PrismMethod } from '../front/validation.js';
import type { Collected } from './exchange.js';
import type { ProxyOptions } from './proxy.js';

/** Every value a log line, report or header must not show: credentials, query tokens, secret fields of the body. */
function secretsOf(headers: IncomingHttpHeaders, url: URL, body: unknown, op: MockOperation): string[] {
  const secrets: string[] = [];
  const { authorization } = headers;
  if (authorization) {
    const [, credential = ''] = authorization.split(' ');
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    // The token, or the Basic credential and its password (the user name is no secret).
    secrets.push(authorization, credential, decoded, decoded.slice(decoded.indexOf(':') + 1));
  }
  for (const name of ['token', 'access_token']) secrets.push(...url.searchParams.getAll(name));
  // One-time codes, cookies and other credential headers, each cookie's value on its own too.
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'authorization' || !CREDENTIAL_HEADER.test(name)) continue;
    for (const text of [value ?? []].flat()) {
      const cookies = name === 'cookie' ? text.split(';').map((pair) => pair.slice(pair.indexOf('=') + 1)) : [];
      secrets.push(text, ...cookies.map((cookie) => cookie.trim()));
    }
  }
  const schema = op.operation.request?.body?.contents?.[0]?.schema as
    | { properties?: Record<string, { writeOnly?: boolean }> }
    | undefined;
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
    if (property.writeOnly && typeof value === 'string') secrets.push(value);
  }
  return secrets.filter((secret) => secret.length > 0);
}

/** The SHA-256 of `parts` and `bytes`, each part preceded by its length so that no two lists share one. */
function digest(parts: readonly string[], bytes?: Buffer): string {
  const text = parts.map((part) => `${part.length}:${part}`).join('');
  return bytes?.length ? createHash('sha256').update(text).update(bytes).digest('hex') : hash('sha256', text);
}

/** The digests of checks that found nothing, the oldest forgotten past 1024. */
class Passed extends Set<string> {
  override add(key: string): this {
    if (this.size >= 1024 && !this.has(key)) this.delete(this.values().next().value!);
    return super.add(key);
  }
}

export type Checker = ReturnType<typeof createChecker>;

/** The table's `checkAnswer` is the one check of answers, the proxy's and the mock's own. */
/** `forgejo`: the upstream is checked as Forgejo, which reads its own one-time code header too. */
export function createChecker(checkAnswer: OperationTable['checkAnswer'], options: ProxyOptions, forgejo: boolean) {
  const stats = createExchangeReport();
  const passedRequests = new Passed();
  const passedAnswers = new Passed();

  function check(op: MockOperation, req: IncomingMessage, url: URL, headers: Record<string, string>, read: Collected) {
    const { chunks, complete } = read;
    const raw = Buffer.concat(chunks);
    let value: unknown;
    if (complete && raw.length > 0) {
      try {
        value = /json/i.test(headers['content-type'] ?? '') ? JSON.parse(raw.toString('utf8')) : raw.toString('latin1');
      } catch {
        value = raw.toString('latin1');
      }
    }
    let secrets: string[] | undefined;
    const secretsNow = (): string[] => (secrets ??= secretsOf(req.headers, url, value, op));
    const hide = (text: string): string => redact(text, secretsNow());
    let failure: string | undefined;
    const violations: Found[] = [];
    /** What `check` finds, unless `key` passed before; remembered when it finds nothing (nor did `also`). */
    const remembered = <T>(memory: Passed, key: string, what: string, check: () => T[], also: unknown[] = []): T[] => {
      if (memory.has(key)) return [];
      let found: T[] = [];
      try {
        found = check();
      } catch (error) {
        failure ??= `the check of the ${what} failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (found.length === 0 && also.length === 0 && failure === undefined) memory.add(key);
      return found;
    };
    // A body too large to read whole streams through; only the rest of the request is checked.
    const requestKey = digest(
      [op.operationId, req.method ?? '', req.url ?? '', req.rawHeaders.join('\n'), complete ? 'whole' : 'cut'],
      raw,
    );
    // The credentials are in the key too: a request remembered had none Gitea would refuse.
    if (!passedRequests.has(requestKey)) {
      const otp = oneTimeCode((name) => [req.headers[name] ?? []].flat()[0], forgejo);
      const auth = checkAuthorization(req.headers.authorization, otp);
      if (!auth.ok) violations.push({ line: `request headers.authorization: ${auth.message}`, count: 1 });
    }
    const request = () => {
      const method = op.method.toLowerCase() as PrismMethod;
      const element = { method, url: { path: url.pathname.slice(BASE_PATH.length), query: queryOf(url) }, headers };
      return requestViolations(op, { ...element, body: value }, complete);
    };
    const found = remembered(passedRequests, requestKey, 'request', request, violations);
    violations.push(...found.slice(0, LISTED_VIOLATIONS).map((line) => ({ line: `request ${line}`, count: 1 })));
    const more = found.length - LISTED_VIOLATIONS;
    if (more > 0) violations.push({ line: `request: ${more} more violations, not listed`, count: more });
    // Redacted first, after every step that reshapes a value (lower-casing a content type …), and only then cut short.
    const lines = (): string => violations.map(({ line }) => clip(hide(line), LINE_CHARS)).join('; ');
    return {
      violations,
      /** Checks the answer, its body `decoded` (undefined: not read, too large or in an unknown coding). */
      answer(answer: IncomingMessage, decoded: string | undefined) {
        const key = digest([
          op.operationId,
          String(answer.statusCode),
          answer.rawHeaders.join('\n'),
          decoded === undefined ? 'unread' : 'read',
          decoded ?? '',
        ]);
        const found = remembered(passedAnswers, key, 'answer', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers))
            if (value !== undefined) headers.set(name, `${value}`);
          const given = { status: answer.statusCode ?? 0, headers, body: decoded ?? '' };
          return checkAnswer(op.operationId, given, { body: decoded !== undefined, redact: hide });
        });
        for (const violation of found)
          violations.push({ line: `response ${describeViolation(violation)}`, count: violation.count ?? 1 });
      },
      lines,
      /** Counts the exchange and tells it; `answered`: the upstream's answer was checked, so a failure of the check is a bug to warn of. */
      conclude(answered: boolean) {
        stats.record(op.operationId, violations, violations.length > 0 ? secretsNow() : []);
        const where = `${op.operationId} ${req.method} ${url.pathname}`;
        const failed = answered && failure !== undefined;
        if (failed) options.onWarning?.(clip(hide(bugMessage(`${where}: ${failure}`)), LINE_CHARS));
        options.onExchange?.(failed ? 'check failed' : true);
        if (violations.length === 0) return;
        const count = total(violations);
        options.onViolations?.(hide(`${where}: ${count} violation${count > 1 ? 's' : ''}: ${lines()}`));
      },
    };
  }
  return { check, stats };
}
