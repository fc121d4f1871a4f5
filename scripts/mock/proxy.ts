// The proxy answer source (`gitea-mock --proxy https://gitea.example.org`): every request goes to
// a real Gitea or Forgejo unchanged, and every exchange of the 20 operations is checked against
// the document on the way: the request with Prism's validator (as the mock checks requests), the
// answer with the check live mode uses (scripts/conformance.ts). Violations are reported (a log
// line per exchange, an X-Contract-Violations header, a report file) and never change the answer,
// unless --strict refuses a request that breaks the document.
//
// Prism has a proxy of its own (`prism proxy`), but it does not serve here: it parses and
// re-serialises bodies, so answers are not byte for byte the upstream's; it reads whole answers
// into memory, so a 50 MB download is buffered; and it cannot let requests outside the document
// through untouched. What is used from Prism is its router table and its request validator.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { parse } from 'yaml';
import { redact } from '../../src/redact.js';
import { listOperations, type JsonObject, type Operation } from '../../test/support/document.js';
import { createSchemaValidator } from '../../test/support/schema.js';
import { describeViolation, mismatches } from '../conformance.js';
import { networkFailure } from '../network-failure.js';
import type { MockOperation } from './operations.js';
import type { FrontServices, PassThroughSource } from './source.js';

export interface ProxyOptions {
  /** The upstream's origin, such as `https://gitea.example.org`; paths are kept, /api/v1 included. */
  upstream: string;
  /** Refuse a request that breaks the document with the mock's 422 instead of forwarding it. */
  strict?: boolean;
  /** Write a JSON report of the exchanges to this file when the proxy stops. */
  report?: string;
  /** Allow a plain-http upstream on another machine (loopback is always allowed). */
  allowInsecureUpstream?: boolean;
  /** Longest wait for the upstream, before its answer and between its chunks (default 30 000 ms). */
  timeoutMs?: number;
  /** One line per exchange with violations; never holds a credential. */
  onViolations?: (line: string) => void;
}

/** Bodies up to this size are read whole and checked; larger ones stream through unchecked. */
const CHECK_LIMIT = 10 * 1024 * 1024;
/** Connection-level headers, which a proxy never passes on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

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
  if (url.pathname !== '/' || url.search || url.hash) throw new Error('--proxy takes the upstream origin only (such as https://gitea.example.org); /api/v1 is kept from each request');
  if (url.protocol === 'http:' && !allowInsecureUpstream(url, allowInsecure)) {
    throw new Error(`--proxy ${url.origin} is plain http: clients' credentials would cross the network in clear; use https, or --allow-insecure-upstream`);
  }
  return url;
}

function allowInsecureUpstream(url: URL, allowed: boolean): boolean {
  return allowed || LOOPBACK.test(url.hostname);
}

interface Collected {
  chunks: Buffer[];
  size: number;
  /** False when the body was larger than the limit: the rest is still in the stream, paused. */
  complete: boolean;
}

/** Reads a body up to `limit` bytes; past it, pauses and leaves the rest to be piped. */
function collect(stream: Readable, limit: number): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (complete: boolean): void => {
      stream.off('data', onData).off('end', onEnd).off('error', reject);
      resolve({ chunks, size, complete });
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        done(false);
      }
    };
    const onEnd = (): void => done(true);
    stream.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

function forwardedHeaders(headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'host') out[name] = value;
  out.host = upstream.host;
  return out;
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
  if (typeof headers['x-gitea-otp'] === 'string') secrets.push(headers['x-gitea-otp']);
  const schema = op.operation.request?.body?.contents?.[0]?.schema as { properties?: Record<string, { writeOnly?: boolean }> } | undefined;
  if (body && typeof body === 'object') {
    for (const [name, property] of Object.entries(schema?.properties ?? {})) {
      const value = (body as Record<string, unknown>)[name];
      if (property.writeOnly && typeof value === 'string') secrets.push(value);
    }
  }
  return secrets.filter((secret) => secret.length > 0);
}

interface OperationStats {
  exchanges: number;
  withViolations: number;
  violations: Record<string, number>;
}

/** The kind of a violation for the report, such as `request.body` or `response.headers`: where in the exchange it is. */
function kindOf(line: string): string {
  const [side = '', part = ''] = line.split(' ');
  const area = part.split(/[.:]/)[0] ?? '';
  return `${side}.${({ header: 'headers', content: 'content-type' } as Record<string, string>)[area] ?? area}`;
}

export async function createProxy(document: string, options: ProxyOptions): Promise<PassThroughSource> {
  const upstream = checkUpstream(options.upstream, options.allowInsecureUpstream);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const doc = parse(readFileSync(document, 'utf8'), { maxAliasCount: -1 }) as JsonObject;
  const schemas = createSchemaValidator(doc);
  const operations = new Map<string, Operation>(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
  const stats = new Map<string, OperationStats>();
  let outside = 0;
  const started = new Date().toISOString();
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  // Connections to the upstream are kept and reused: a new TCP (and TLS) connection per request
  // would cost more than everything else the proxy does.
  const agent = upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });

  function record(operationId: string, violations: string[]): void {
    const entry = stats.get(operationId) ?? { exchanges: 0, withViolations: 0, violations: {} };
    entry.exchanges++;
    if (violations.length > 0) entry.withViolations++;
    for (const line of violations) entry.violations[kindOf(line)] = (entry.violations[kindOf(line)] ?? 0) + 1;
    stats.set(operationId, entry);
  }

  /** The upstream's answer to the request, with `head` (already read) and the rest of `body` sent after it. */
  function exchange(req: IncomingMessage, head: Buffer[], rest: Readable | undefined): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      // The path as the client sent it, not normalised: the upstream is the one to judge it.
      const target = { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, path: req.url ?? '/' };
      const outgoing = send({ ...target, agent, method: req.method, headers: forwardedHeaders(req.headers, upstream), timeout: timeoutMs }, resolve);
      outgoing.once('timeout', () => outgoing.destroy(Object.assign(new Error(`the upstream did not answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
      outgoing.once('error', reject);
      for (const chunk of head) outgoing.write(chunk);
      if (rest) rest.pipe(outgoing);
      else outgoing.end();
    });
  }

  /** The upstream failing, in the service's error dialect: 504 for a stall, 502 for anything else. */
  function upstreamFailed(res: ServerResponse, error: NodeJS.ErrnoException, cors: Record<string, string>, front: FrontServices): number {
    const timedOut = error.code === 'ETIMEDOUT';
    const status = timedOut ? 504 : 502;
    if (res.headersSent) {
      res.destroy();
      return status;
    }
    // For a TLS failure, OpenSSL's reason too (`wrong version number`, `certificate has expired` …),
    // and what to try where there is one thing to try.
    const { code, tls, advice } = networkFailure(error);
    const reason = timedOut ? error.message : `${code ?? error.message}${tls ? ` (TLS: ${tls}${advice ? `: ${advice}` : ''})` : ''}`;
    front.sendError(res, status, `the upstream ${upstream.host} failed: ${reason}`, cors);
    return status;
  }

  /** Sends the upstream's answer on: status, end-to-end headers and body as received, plus CORS and the violation count. */
  function relay(res: ServerResponse, answer: IncomingMessage, head: Buffer[], rest: Readable | undefined, cors: Record<string, string>, count: number | undefined): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      // The mock's own CORS answers stand in for the upstream's: the browser talks to the proxy's origin.
      if (value !== undefined && !HOP_BY_HOP.has(name) && !name.startsWith('access-control-')) headers[name] = value;
    }
    Object.assign(headers, cors, count === undefined ? {} : { 'X-Contract-Violations': String(count) });
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
    for (const chunk of head) res.write(chunk);
    if (rest) rest.pipe(res);
    else res.end();
  }

  return {
    async passThrough(req: IncomingMessage, res: ServerResponse, cors: Record<string, string>, front: FrontServices): Promise<number> {
      const url = new URL(req.url ?? '/', 'http://proxy');
      const inApi = url.pathname === '/api/v1' || url.pathname.startsWith('/api/v1/');
      const op = inApi ? front.route(req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'), url.pathname.slice('/api/v1'.length) || '/') : undefined;
      try {
        if (!op) {
          // Not one of the 20 operations: through untouched, and only counted.
          outside++;
          const answer = await exchange(req, [], req);
          relay(res, answer, [], answer, cors, undefined);
          return answer.statusCode ?? 502;
        }
        const requestBody = await collect(req, CHECK_LIMIT);
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
        const violations: string[] = [];
        const credentials = front.credentialProblem(req.headers.authorization, req.headers['x-gitea-otp'] as string | undefined);
        if (credentials) violations.push(`request headers.authorization: ${credentials}`);
        // A body too large to read whole streams through; only the rest of the request is checked.
        violations.push(...front.requestViolations(op, url, req.headers, body, requestBody.complete).map((line) => `request ${line}`));
        const secrets = secretsOf(req.headers, url, body, op);
        const report = (lines: string[]): void => {
          if (lines.length === 0) return;
          options.onViolations?.(redact(`${op.operationId} ${req.method} ${url.pathname}: ${lines.length} violation${lines.length > 1 ? 's' : ''}: ${lines.join('; ')}`, secrets));
        };
        if (options.strict && violations.length > 0) {
          record(op.operationId, violations);
          report(violations);
          front.sendError(res, 422, redact(`the request breaks the document: ${violations.join('; ')}`, secrets), { ...cors, 'X-Contract-Violations': String(violations.length) });
          return 422;
        }
        const answer = await exchange(req, requestBody.chunks, requestBody.complete ? undefined : req);
        const answerBody = await collect(answer, CHECK_LIMIT);
        const checked = mismatches(
          doc,
          schemas,
          operations.get(op.operationId)!,
          { status: answer.statusCode ?? 0, headers: new Headers(Object.entries(answer.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)] as [string, string]]))), body: answerBody.complete ? Buffer.concat(answerBody.chunks).toString('utf8') : '' },
          { body: answerBody.complete },
        );
        violations.push(...checked.map((violation) => `response ${describeViolation(violation)}`));
        record(op.operationId, violations);
        report(violations);
        relay(res, answer, answerBody.chunks, answerBody.complete ? undefined : answer, cors, violations.length);
        return answer.statusCode ?? 502;
      } catch (error) {
        return upstreamFailed(res, error as NodeJS.ErrnoException, cors, front);
      }
    },
    async close() {
      agent.destroy();
      if (!options.report) return;
      const operationsReport = Object.fromEntries([...stats].sort(([a], [b]) => a.localeCompare(b)));
      const report = { upstream: upstream.origin, started, finished: new Date().toISOString(), operations: operationsReport, notInContract: { exchanges: outside } };
      await writeFile(options.report, `${JSON.stringify(report, null, 2)}\n`);
    },
  };
}
