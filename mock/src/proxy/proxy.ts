// The proxy answer source (`gitea-mock --proxy https://gitea.example.org`): every request goes to
// a real Gitea or Forgejo unchanged, and every exchange of the 20 operations is checked against
// the document on the way: the request with Prism's validator (as the mock checks requests), the
// answer with the check live mode uses (contract/conformance.ts). Violations are reported (a log
// line per exchange, an X-Contract-Violations header, a report file) and never change the answer,
// unless --strict refuses a request that breaks the document.
//
// Prism has a proxy of its own (`prism proxy`), but it does not serve here: it parses and
// re-serialises bodies, so answers are not byte for byte the upstream's; it reads whole answers
// into memory, so a 50 MB download is buffered; and it cannot let requests outside the document
// through untouched. What is used from Prism is its router table and its request validator.
import { createHash } from 'node:crypto';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { isLoopbackHost } from 'gitea-contract/internal';
import { redact } from '../common/redaction.js';
import { listOperations, type Operation } from '../contract/document.js';
import { readDocumentFile } from '../contract/document-file.js';
import { createSchemaValidator } from '../contract/schema.js';
import { clip } from '../contract/clip.js';
import { describeViolation, mismatches, type Violation } from '../contract/conformance.js';
import { createExchangeReport, LINE_CHARS, total, type Found } from '../contract/exchange-report.js';
import { networkFailure } from '../common/network-failure.js';
import { Refusal } from '../common/refusal.js';
import { originFormRefusal } from '../common/request-target.js';
import { decodedBody, endToEnd, headersProblem, requestFraming, statusProblem } from './proxy-wire.js';
import { exposing, retryShortly } from '../front/cors.js';
import { LISTED_VIOLATIONS } from '../front/validation.js';
import type { MockOperation } from '../front/operations.js';
import type { BodyReading } from '../front/body.js';
import type { FrontServices, PassThroughSource } from '../front/answer-source.js';

export interface ProxyOptions {
  /** The upstream's origin, such as `https://gitea.example.org`; paths are kept, /api/v1 included. */
  upstream: string;
  /** Refuse a request that breaks the document with the mock's 422 instead of forwarding it. */
  strict?: boolean;
  /** Allow a plain-http upstream on another machine (loopback is always allowed). */
  allowInsecureUpstream?: boolean;
  /** Longest silence of the upstream or of a client's upload: before the answer, between chunks (default 30 000 ms). */
  timeoutMs?: number;
  /** Longest exchange, from the request's arrival to the answer's last byte (default 300 000 ms). */
  exchangeTimeoutMs?: number;
  /** Most connections open to the upstream at once; further requests wait for one (default 64). */
  upstreamConnections?: number;
  /** Browser origins answered with CORS besides this machine's (`http://localhost:5173` …); others are refused. */
  corsOrigins?: readonly string[];
  /** Forward the `Cookie` header (a signed-in web session) to the upstream; off by default. */
  forwardCookies?: boolean;
  /** One line per exchange with violations; never holds a credential. */
  onViolations?: (line: string) => void;
  /**
   * Each exchange of the 20 operations: `true` once checked, `false` when the proxy answered it
   * itself (`502`, `504`, `408`) because the upstream failed or a bound passed, so that nothing
   * could be checked; `'check failed'` when the exchange went through but the proxy's own check
   * of it threw (a bug of the proxy, never the peer's doing).
   */
  onExchange?: (checked: boolean | 'check failed') => void;
  /** A failure of the proxy itself, such as a check that threw; never holds a credential. */
  onWarning?: (line: string) => void;
}

/** Bodies up to this size are read whole and checked; larger ones stream through unchecked. */
const CHECK_LIMIT = 10 * 1024 * 1024;
/** Header names whose values are credentials, as the client redacts them. */
const CREDENTIAL_HEADER = /auth|token|secret|password|cookie|otp|key|session/i;

/** The upstream origin, or why it cannot be one; credentials go to it, so it must be https unless allowed. */
export function checkUpstream(upstream: string, allowInsecure = false): URL {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw new Error('--proxy needs an absolute URL, such as https://gitea.example.org');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('--proxy needs an http: or https: URL');
  if (url.username || url.password) throw new Error('--proxy must not carry credentials: clients send their own');
  if (url.pathname !== '/' || url.search || url.hash)
    throw new Error(
      '--proxy takes the upstream origin only (such as https://gitea.example.org); /api/v1 is kept from each request',
    );
  if (url.protocol === 'http:' && !allowInsecureUpstream(url, allowInsecure)) {
    throw new Error(
      `--proxy ${url.origin} is plain http: clients' credentials would cross the network in clear; use https, or --allow-insecure-http`,
    );
  }
  return url;
}

function allowInsecureUpstream(url: URL, allowed: boolean): boolean {
  return allowed || isLoopbackHost(url.hostname);
}

interface Collected {
  chunks: Buffer[];
  size: number;
  /** False when the body was larger than the limit: the rest is still in the stream, paused. */
  complete: boolean;
}

/** A refusal that frees itself as other requests end (the budget of request bodies): answered with `Retry-After`. */
class Busy extends Refusal {}

/**
 * Reads a body up to `limit` bytes; past it, pauses and leaves the rest to be piped. A request's
 * body takes its bytes from the server's budget (`reading`) as they arrive: past it, the stream
 * is paused and the refusal thrown. Rejects when `signal` aborts.
 */
function collect(stream: Readable, limit: number, signal: AbortSignal, reading?: BodyReading): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (): void => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const done = (complete: boolean): void => {
      settle();
      resolve({ chunks, size, complete });
    };
    const onError = (error: Error): void => {
      settle();
      reject(signal.aborted ? signal.reason : error);
    };
    const onAbort = (): void => onError(signal.reason as Error);
    const onData = (chunk: Buffer): void => {
      const refusal = reading?.take(chunk.length);
      if (refusal) {
        stream.pause();
        settle();
        reject(new (refusal.status === 503 ? Busy : Refusal)(refusal.status, refusal.message));
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        done(false);
      }
    };
    const onEnd = (): void => done(true);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/** Every value a log line, report or header must not show: credentials, query tokens, secret fields of the body. */
function secretsOf(headers: IncomingHttpHeaders, url: URL, body: unknown, op: MockOperation): string[] {
  const secrets: string[] = [];
  const authorization = headers.authorization;
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
    for (const text of [value ?? []].flat())
      secrets.push(
        text,
        ...(name === 'cookie' ? text.split(';').map((pair) => pair.slice(pair.indexOf('=') + 1).trim()) : []),
      );
  }
  const schema = op.operation.request?.body?.contents?.[0]?.schema as
    | { properties?: Record<string, { writeOnly?: boolean }> }
    | undefined;
  if (body && typeof body === 'object') {
    for (const [name, property] of Object.entries(schema?.properties ?? {})) {
      const value = (body as Record<string, unknown>)[name];
      if (property.writeOnly && typeof value === 'string') secrets.push(value);
    }
  }
  return secrets.filter((secret) => secret.length > 0);
}

/** Requests and answers whose check found nothing, remembered (by digest) in each memory. */
const PASSED_REMEMBERED = 1024;

/**
 * Checks that found nothing, remembered by a SHA-256 of everything the check reads, so that a
 * byte-for-byte repeat of a conforming request or answer (a test suite polls, a client retries)
 * is judged as the first was without checking it again. The check is a function of those bytes
 * alone; only digests are kept, never a credential or a body. The oldest goes first.
 */
function passedMemory(): { has(key: string): boolean; add(key: string): void } {
  const passed = new Set<string>();
  return {
    has: (key) => passed.has(key),
    add(key) {
      if (passed.size >= PASSED_REMEMBERED) passed.delete(passed.values().next().value!);
      passed.add(key);
    },
  };
}

/** The SHA-256 of `parts`, each preceded by its length so that no two lists of parts share one. */
function digest(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:`).update(part);
  return hash.digest('hex');
}

/** A request's violation lines as Found. */
const each = (lines: readonly string[]): Found[] => lines.map((line) => ({ line, count: 1 }));

/** A request's violation lines as Found, at most LISTED_VIOLATIONS of them and one that stands for the rest. */
function listed(lines: readonly string[]): Found[] {
  const shown = each(lines.slice(0, LISTED_VIOLATIONS));
  const more = lines.length - shown.length;
  return more > 0 ? [...shown, { line: `request: ${more} more violations, not listed`, count: more }] : shown;
}

/** An answer's violations as Found, each line starting `response `. */
const answered = (violations: readonly Violation[]): Found[] =>
  violations.map((violation) => ({ line: `response ${describeViolation(violation)}`, count: violation.count ?? 1 }));

export async function createProxy(document: string, options: ProxyOptions): Promise<PassThroughSource> {
  const upstream = checkUpstream(options.upstream, options.allowInsecureUpstream);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const exchangeTimeoutMs = options.exchangeTimeoutMs ?? 300_000;
  const connections = options.upstreamConnections ?? 64;
  const doc = readDocumentFile(document).document;
  const schemas = createSchemaValidator(doc);
  const operations = new Map<string, Operation>(
    listOperations(doc).map((op) => [String(op.operation.operationId), op]),
  );
  const stats = createExchangeReport();
  const passedRequests = passedMemory();
  const passedAnswers = passedMemory();
  let outside = 0;
  /** Exchanges of the 20 operations the proxy answered itself: the upstream failed, or a bound passed. */
  let unanswered = 0;
  const started = new Date().toISOString();
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  // Connections to the upstream are kept and reused: a new TCP (and TLS) connection per request
  // would cost more than everything else the proxy does. Their number has a ceiling, so that slow
  // clients cannot take the upstream's; a connection after anything unexpected is destroyed, never reused.
  const agentOptions = { keepAlive: true, maxSockets: connections, maxTotalSockets: connections };
  const agent = upstream.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const seconds = (ms: number): string => `${ms / 1000} s`;

  /**
   * The upstream's answer to `req`, sent with `headers`, its body's first `head` chunks, and the
   * rest of `req` streamed after them when `streamRest`. Aborting `control` ends it with the
   * reason; so does the upstream's silence, with a 504.
   */
  function exchange(
    req: IncomingMessage,
    headers: string[],
    head: Buffer[],
    streamRest: boolean,
    control: AbortController,
    opened: (outgoing: ClientRequest) => void,
  ): Promise<IncomingMessage> {
    const { signal } = control;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      // The path as the client sent it, not normalised: the upstream is the one to judge it.
      const outgoing = send(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          path: req.url ?? '/',
          agent,
          method: req.method,
          headers,
          timeout: timeoutMs,
        },
        resolve,
      );
      opened(outgoing);
      // For the exchange's lifetime: an error after the answer came is the answer's stream's to report.
      outgoing.on('error', reject);
      outgoing.on('timeout', () =>
        control.abort(new Refusal(504, `the upstream ${upstream.host} sent nothing for ${seconds(timeoutMs)}`)),
      );
      signal.addEventListener('abort', () => outgoing.destroy(signal.reason as Error), { once: true });
      for (const chunk of head) outgoing.write(chunk);
      if (streamRest) req.pipe(outgoing);
      else outgoing.end();
    });
  }

  /** The exchange failing, in the service's error dialect: the proxy's own refusal with its status and message, else 502 naming the network failure. */
  function failed(
    req: IncomingMessage,
    res: ServerResponse,
    error: NodeJS.ErrnoException,
    cors: Record<string, string>,
    front: FrontServices,
  ): number {
    const status = error instanceof Refusal ? error.status : 502;
    if (res.headersSent) {
      // Part of the answer is out: the client must see it cut short, never wait for the rest.
      res.destroy();
      return status;
    }
    // For a TLS failure, OpenSSL's reason too (`wrong version number`, `certificate has expired` …),
    // and what to try where there is one thing to try.
    const { code, tls, advice } = networkFailure(error);
    const message =
      error instanceof Refusal
        ? error.message
        : `the upstream ${upstream.host} failed: ${code ?? error.message}${tls ? ` (TLS: ${tls}${advice ? `: ${advice}` : ''})` : ''}`;
    // A request whose body was not read to its end leaves the connection unusable.
    res.shouldKeepAlive &&= req.complete;
    // A clean reason phrase: `writeHead` keeps the one it last stored, even one it refused.
    res.statusMessage = '';
    front.sendError(res, status, message, error instanceof Busy ? retryShortly(cors) : cors);
    return status;
  }

  /** Sends the upstream's answer on: status, end-to-end headers and body as received, plus CORS and the violation count. */
  function relay(
    res: ServerResponse,
    answer: IncomingMessage,
    head: Buffer[],
    streamRest: boolean,
    cors: Record<string, string>,
    count: number | undefined,
  ): void {
    // Checked before anything is written: `writeHead` throws on what Node's parser let through.
    const problem = statusProblem(answer.statusCode, answer.statusMessage) ?? headersProblem(answer.rawHeaders);
    if (problem)
      throw new Refusal(502, `the upstream ${upstream.host} sent an answer that cannot be passed on: ${problem}`);
    // The mock's own CORS answers stand in for the upstream's: the browser talks to the proxy's origin.
    const headers = endToEnd(answer.rawHeaders, (name) => name.startsWith('access-control-'));
    for (const [name, value] of Object.entries(
      count === undefined
        ? cors
        : { ...exposing(cors, 'X-Contract-Violations'), 'X-Contract-Violations': String(count) },
    ))
      headers.push(name, value);
    res.writeHead(answer.statusCode!, answer.statusMessage, headers);
    for (const chunk of head) res.write(chunk);
    // A stream the upstream cuts, or the proxy halts, destroys the client's connection with it.
    if (streamRest) pipeline(answer, res, () => {});
    else res.end();
  }

  return {
    async passThrough(
      req: IncomingMessage,
      res: ServerResponse,
      cors: Record<string, string>,
      front: FrontServices,
    ): Promise<number> {
      const url = new URL(req.url ?? '/', 'http://proxy');
      const framing = requestFraming(req.headers['transfer-encoding']);
      const refusal =
        originFormRefusal(req.url, '/api/v1/version', { server: 'proxy', host: upstream.host }) ??
        (typeof framing === 'string' ? framing : headersProblem(req.rawHeaders));
      if (refusal !== undefined) {
        // Nothing of a request whose body cannot be framed is forwarded, nor is its connection kept.
        res.shouldKeepAlive = false;
        front.sendError(res, 400, refusal, cors);
        req.resume();
        return 400;
      }
      const headers = [
        ...endToEnd(req.rawHeaders, (name) => name === 'host' || (name === 'cookie' && !options.forwardCookies)),
        'Host',
        upstream.host,
        ...(framing as string[]),
      ];
      const inApi = url.pathname === '/api/v1' || url.pathname.startsWith('/api/v1/');
      const op = inApi
        ? front.route(
            req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'),
            url.pathname.slice('/api/v1'.length) || '/',
          )
        : undefined;

      // The bounds of the exchange: its whole length, and a client's upload that stalls. Either
      // ends it; so does the client leaving, and then the upstream connection goes too.
      const control = new AbortController();
      const halt = (error: Refusal): void => control.abort(error);
      let outgoing: ClientRequest | undefined;
      const whole = setTimeout(
        () =>
          halt(
            new Refusal(
              req.complete ? 504 : 408,
              req.complete
                ? `the exchange with the upstream ${upstream.host} took longer than ${seconds(exchangeTimeoutMs)}`
                : `the request took longer than ${seconds(exchangeTimeoutMs)}`,
            ),
          ),
        exchangeTimeoutMs,
      );
      const upload = setTimeout(function stalled() {
        // Paused, it waits for the upstream to read, which is the upstream's silence to judge.
        if (req.isPaused()) upload.refresh();
        else halt(new Refusal(408, `the request body stalled: no byte for ${seconds(timeoutMs)}`));
      }, timeoutMs);
      const refresh = (): void => void upload.refresh();
      req.on('data', refresh).once('end', () => clearTimeout(upload));
      control.signal.addEventListener('abort', () => {
        clearTimeout(upload);
        if (res.headersSent) res.destroy();
      });
      // The body's bytes count against the server's budget until the exchange ends.
      const reading = front.bodies.reading();
      res.once('close', () => {
        reading.release();
        clearTimeout(whole);
        clearTimeout(upload);
        req.off('data', refresh);
        if (!res.writableFinished) outgoing?.destroy();
      });
      const opened = (request: ClientRequest): void => void (outgoing = request);
      let checked = false;
      try {
        // The body is read (up to CHECK_LIMIT) before an upstream connection is taken: a client that
        // uploads a byte at a time then holds its own connection only, never one of the upstream's.
        const declared = reading.declared(Math.min(Number(req.headers['content-length'] ?? 0), CHECK_LIMIT));
        if (declared) throw new Refusal(declared.status, declared.message);
        const requestBody = await collect(req, CHECK_LIMIT, control.signal, reading);
        if (!op) {
          // Not one of the 20 operations: through untouched, and only counted.
          outside++;
          const answer = await exchange(req, headers, requestBody.chunks, !requestBody.complete, control, opened);
          relay(res, answer, [], true, cors, undefined);
          return answer.statusCode!;
        }
        const raw = Buffer.concat(requestBody.chunks);
        const contentType = String(req.headers['content-type'] ?? '').toLowerCase();
        let body: unknown;
        if (requestBody.complete && raw.length > 0) {
          try {
            body = /json/.test(contentType) ? (JSON.parse(raw.toString('utf8')) as unknown) : raw.toString('latin1');
          } catch {
            body = raw.toString('latin1');
          }
        }
        const violations: Found[] = [];
        const secrets = secretsOf(req.headers, url, body, op);
        const hide = (text: string): string => redact(text, secrets);
        /** Why the proxy's own check of this exchange failed, if it did: its failure, not the peer's. */
        let checkFailure: string | undefined;
        const checking = <T>(what: string, check: () => T, otherwise: T): T => {
          try {
            return check();
          } catch (error) {
            checkFailure ??= `the check of the ${what} failed: ${error instanceof Error ? error.message : String(error)}`;
            return otherwise;
          }
        };
        const credentials = front.credentialProblem(
          req.headers.authorization,
          req.headers['x-gitea-otp'] as string | undefined,
        );
        if (credentials) violations.push(...each([`request headers.authorization: ${credentials}`]));
        // A body too large to read whole streams through; only the rest of the request is checked.
        const requestKey = digest(
          op.operationId,
          req.method ?? '',
          req.url ?? '',
          req.rawHeaders.join('\n'),
          requestBody.complete ? 'whole' : 'cut',
          raw,
        );
        if (!passedRequests.has(requestKey)) {
          const lines = checking(
            'request',
            () => front.requestViolations(op, url, req.headers, body, requestBody.complete),
            [],
          );
          if (lines.length === 0 && checkFailure === undefined) passedRequests.add(requestKey);
          violations.push(...listed(lines.map((line) => `request ${line}`)));
        }
        const report = (found: Found[]): void => {
          if (found.length === 0) return;
          const count = total(found);
          // Redacted first, after every step that reshapes a value (lower-casing a content type …),
          // and only then cut short.
          options.onViolations?.(
            hide(
              `${op.operationId} ${req.method} ${url.pathname}: ${count} violation${count > 1 ? 's' : ''}: ${found.map(({ line }) => clip(hide(line), LINE_CHARS)).join('; ')}`,
            ),
          );
        };
        if (options.strict && violations.length > 0) {
          stats.record(op.operationId, violations, secrets);
          checked = true;
          options.onExchange?.(true);
          report(violations);
          res.shouldKeepAlive &&= requestBody.complete;
          front.sendError(
            res,
            422,
            `the request breaks the document: ${violations.map(({ line }) => clip(hide(line), LINE_CHARS)).join('; ')}`,
            { ...exposing(cors, 'X-Contract-Violations'), 'X-Contract-Violations': String(total(violations)) },
          );
          return 422;
        }
        const answer = await exchange(req, headers, requestBody.chunks, !requestBody.complete, control, opened);
        const answerBody = await collect(answer, CHECK_LIMIT, control.signal);
        const decoded = answerBody.complete
          ? await decodedBody(Buffer.concat(answerBody.chunks), answer.headers['content-encoding'], CHECK_LIMIT)
          : undefined;
        const answerKey = digest(
          op.operationId,
          String(answer.statusCode),
          answer.rawHeaders.join('\n'),
          decoded === undefined ? 'unread' : 'read',
          decoded ?? '',
        );
        const checks = passedAnswers.has(answerKey)
          ? []
          : checking(
              'answer',
              () =>
                mismatches(
                  doc,
                  schemas,
                  operations.get(op.operationId)!,
                  {
                    status: answer.statusCode ?? 0,
                    headers: new Headers(
                      Object.entries(answer.headers).flatMap(([name, value]) =>
                        value === undefined ? [] : [[name, String(value)] as [string, string]],
                      ),
                    ),
                    body: decoded ?? '',
                  },
                  { body: decoded !== undefined, redact: hide },
                ),
              [],
            );
        if (checks.length === 0 && checkFailure === undefined) passedAnswers.add(answerKey);
        violations.push(...answered(checks));
        stats.record(op.operationId, violations, secrets);
        checked = true;
        if (checkFailure !== undefined)
          options.onWarning?.(
            clip(
              hide(`${op.operationId} ${req.method} ${url.pathname}: ${checkFailure}; this is a bug in gitea-mock`),
              LINE_CHARS,
            ),
          );
        options.onExchange?.(checkFailure === undefined ? true : 'check failed');
        report(violations);
        relay(res, answer, answerBody.chunks, !answerBody.complete, cors, total(violations));
        return answer.statusCode!;
      } catch (error) {
        // After anything unexpected, the upstream connection is not reused.
        outgoing?.destroy();
        if (op && !checked) {
          unanswered++;
          options.onExchange?.(false);
        }
        return failed(req, res, error as NodeJS.ErrnoException, cors, front);
      }
    },
    report: () => ({
      upstream: upstream.origin,
      started,
      finished: new Date().toISOString(),
      operations: stats.byName(),
      notAnswered: { exchanges: unanswered },
      notInContract: { exchanges: outside },
    }),
    async close() {
      agent.destroy();
    },
  };
}
