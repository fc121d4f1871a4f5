// One exchange through the proxy: the request forwarded as it came (raw header names, order and
// bytes, its body streamed past what is read to be checked), within its bounds (the whole
// exchange's length, an upload or an upstream that stalls, the server's budget of request bodies),
// checked (check.ts) and relayed back, or answered by the proxy itself when a bound passes or the
// upstream fails.
import * as http from 'node:http';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import { pipeline } from 'node:stream';
import { clip } from '../contract/clip.js';
import { LINE_CHARS, total } from '../contract/exchange-report.js';
import { networkFailure } from '../common/network-failure.js';
import { Refusal } from '../common/refusal.js';
import { originFormRefusal } from '../common/request-target.js';
import type { BodyBudget, BodyReading } from '../front/body.js';
import { exposing, retryShortly } from '../front/cors.js';
import type { MockOperation } from '../front/operations.js';
import type { Checker } from './check.js';
import type { ProxyOptions } from './proxy.js';
import { Busy, collect, decodedBody, endToEnd, Halt, headersProblem, requestFraming, statusProblem } from './wire.js';

/** Bodies up to this size are read whole and checked; larger ones stream through unchecked. */
const CHECK_LIMIT = 10 * 1024 * 1024;

const seconds = (ms: number): string => `${ms / 1000} s`;

/** What an exchange has of the front: the request's single-valued headers, its CORS, and its error dialect. */
export interface Arrival {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL | undefined;
  headers: Record<string, string>;
  cors: Record<string, string>;
  /** The operation of the document, for a request to one. */
  op: MockOperation | undefined;
  sendError(status: number, message: string, headers: Record<string, string>): void;
}

/** The upstream, the connections kept to it, and the bounds of an exchange with it. */
class Upstream {
  readonly timeoutMs: number;
  readonly exchangeTimeoutMs: number;
  readonly send: typeof http.request;
  // Connections to the upstream are kept and reused: a new TCP (and TLS) connection per request
  // would cost more than everything else the proxy does. Their number has a ceiling, so that slow
  // clients cannot take the upstream's; a connection after anything unexpected is destroyed, never reused.
  readonly agent: http.Agent;

  constructor(
    readonly url: URL,
    options: ProxyOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.exchangeTimeoutMs = options.exchangeTimeoutMs ?? 300_000;
    const connections = options.upstreamConnections ?? 64;
    const { request, Agent } = url.protocol === 'https:' ? https : http;
    this.send = request as typeof http.request;
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, maxTotalSockets: connections });
  }

  /**
   * The upstream's answer to `req`, sent with `headers`, its body's first `head` chunks, and the
   * rest of `req` streamed after them when `streamRest`. A halt ends it with the reason; so does
   * the upstream's silence, with a 504.
   */
  forward(
    req: IncomingMessage,
    headers: string[],
    head: Buffer[],
    streamRest: boolean,
    halt: Halt,
    opened: (outgoing: ClientRequest) => void,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (halt.reason) return reject(halt.reason);
      // The path as the client sent it, not normalised: the upstream is the one to judge it.
      const { protocol, hostname, port } = this.url;
      const outgoing = this.send(
        {
          protocol,
          hostname,
          port,
          path: req.url ?? '/',
          agent: this.agent,
          method: req.method,
          headers,
          timeout: this.timeoutMs,
        },
        resolve,
      );
      opened(outgoing);
      // For the exchange's lifetime: an error after the answer came is the answer's stream's to report.
      outgoing.on('error', reject);
      outgoing.on('timeout', () =>
        halt.halt(new Refusal(504, `the upstream ${this.url.host} sent nothing for ${seconds(this.timeoutMs)}`)),
      );
      halt.on((reason) => outgoing.destroy(reason));
      for (const chunk of head) outgoing.write(chunk);
      if (streamRest) req.pipe(outgoing);
      else outgoing.end();
    });
  }

  /** The exchange failing, in the service's error dialect: the proxy's own refusal with its status and message, else 502 naming the network failure. */
  failed({ req, res, cors, sendError }: Arrival, error: NodeJS.ErrnoException): number {
    const status = error instanceof Refusal ? error.status : 502;
    if (res.headersSent) {
      // Part of the answer is out: the client must see it cut short, never wait for the rest.
      res.destroy();
      return status;
    }
    // For a TLS failure, OpenSSL's reason too, and what to try where there is one thing to try.
    const { code, tls, advice } = networkFailure(error);
    const message =
      error instanceof Refusal
        ? error.message
        : `the upstream ${this.url.host} failed: ${code ?? error.message}${tls ? ` (TLS: ${tls}${advice ? `: ${advice}` : ''})` : ''}`;
    // A request whose body was not read to its end leaves the connection unusable.
    res.shouldKeepAlive &&= req.complete;
    // A clean reason phrase: `writeHead` keeps the one it last stored, even one it refused.
    res.statusMessage = '';
    sendError(status, message, error instanceof Busy ? retryShortly(cors) : cors);
    return status;
  }

  /** Sends the upstream's answer on: status, end-to-end headers and body as received, plus CORS and the violation count. */
  relay(
    res: ServerResponse,
    answer: IncomingMessage,
    head: Buffer[],
    streamRest: boolean,
    cors: Record<string, string>,
  ): void {
    // Checked before anything is written: `writeHead` throws on what Node's parser let through.
    const problem = statusProblem(answer.statusCode, answer.statusMessage) ?? headersProblem(answer.rawHeaders);
    if (problem)
      throw new Refusal(502, `the upstream ${this.url.host} sent an answer that cannot be passed on: ${problem}`);
    // The mock's own CORS answers stand in for the upstream's: the browser talks to the proxy's origin.
    const headers = endToEnd(answer.rawHeaders, (name) => name.startsWith('access-control-'));
    for (const [name, value] of Object.entries(cors)) headers.push(name, value);
    res.writeHead(answer.statusCode!, answer.statusMessage, headers);
    for (const chunk of head) res.write(chunk);
    // A stream the upstream cuts, or the proxy halts, destroys the client's connection with it.
    if (streamRest) pipeline(answer, res, () => {});
    else res.end();
  }

  /** The bounds of an exchange: its whole length, and an upload that stalls; either halts it, and so does the client leaving. */
  bound(
    { req, res }: Arrival,
    halt: Halt,
    reading: BodyReading,
    bodyless: boolean,
  ): { opened(outgoing: ClientRequest): void; outgoing(): ClientRequest | undefined } {
    let outgoing: ClientRequest | undefined;
    const { timeoutMs } = this;
    const whole = setTimeout(() => {
      const message = req.complete
        ? `the exchange with the upstream ${this.url.host} took longer than ${seconds(this.exchangeTimeoutMs)}`
        : `the request took longer than ${seconds(this.exchangeTimeoutMs)}`;
      halt.halt(new Refusal(req.complete ? 504 : 408, message));
    }, this.exchangeTimeoutMs);
    const upload = bodyless
      ? undefined
      : setTimeout(function stalled() {
          // Paused, it waits for the upstream to read, which is the upstream's silence to judge.
          if (req.isPaused()) upload?.refresh();
          else halt.halt(new Refusal(408, `the request body stalled: no byte for ${seconds(timeoutMs)}`));
        }, timeoutMs);
    const refresh = (): void => void upload?.refresh();
    if (upload) req.on('data', refresh).once('end', () => clearTimeout(upload));
    halt.on(() => {
      clearTimeout(upload);
      if (res.headersSent) res.destroy();
    });
    res.once('close', () => {
      reading.release();
      clearTimeout(whole);
      clearTimeout(upload);
      req.off('data', refresh);
      // The upstream connection goes with the client.
      if (!res.writableFinished) outgoing?.destroy();
    });
    return { opened: (request) => void (outgoing = request), outgoing: () => outgoing };
  }
}

/** With the violations' count, which the browser may read. */
const counted = (cors: Record<string, string>, count: number): Record<string, string> => ({
  ...exposing(cors, 'X-Contract-Violations'),
  'X-Contract-Violations': String(count),
});

export function createExchanges(upstreamUrl: URL, options: ProxyOptions, checker: Checker, bodies: BodyBudget) {
  const upstream = new Upstream(upstreamUrl, options);
  let outside = 0;
  /** Exchanges of the 20 operations the proxy answered itself: the upstream failed, or a bound passed. */
  let unanswered = 0;

  /** Passes `arrival` on, checked when it is a request to one of the 20 operations; resolves with the status sent. */
  async function pass(arrival: Arrival): Promise<number> {
    const { req, res, cors, op, sendError } = arrival;
    const url = arrival.url ?? new URL(req.url ?? '/', 'http://proxy');
    const framing = requestFraming(req.headers['transfer-encoding']);
    const refusal =
      originFormRefusal(req.url, '/api/v1/version', { server: 'proxy', host: upstream.url.host }) ??
      (typeof framing === 'string' ? framing : headersProblem(req.rawHeaders));
    if (refusal !== undefined) {
      // Nothing of a request whose body cannot be framed is forwarded, nor is its connection kept.
      res.shouldKeepAlive = false;
      sendError(400, refusal, cors);
      req.resume();
      return 400;
    }
    const headers = [
      ...endToEnd(req.rawHeaders, (name) => name === 'host' || (name === 'cookie' && !options.forwardCookies)),
      'Host',
      upstream.url.host,
      ...(framing as string[]),
    ];
    const halt = new Halt();
    // The body's bytes count against the server's budget until the exchange ends.
    const reading = bodies.reading();
    // Without Content-Length or Transfer-Encoding a request has no body (RFC 9112 §6.3): nothing to read or wait for.
    const bodyless = framing.length === 0 && (req.headers['content-length'] ?? '0') === '0';
    const { opened, outgoing } = upstream.bound(arrival, halt, reading, bodyless);
    let checked = false;
    try {
      // The body is read (up to CHECK_LIMIT) before an upstream connection is taken: a client that
      // uploads a byte at a time then holds its own connection only, never one of the upstream's.
      const declared = reading.declared(Math.min(Number(req.headers['content-length'] ?? 0), CHECK_LIMIT));
      if (declared) throw new Refusal(declared.status, declared.message);
      const requestBody = bodyless ? { chunks: [], complete: true } : await collect(req, CHECK_LIMIT, halt, reading);
      if (bodyless) req.resume();
      if (!op) {
        // Not one of the 20 operations: through untouched, and only counted.
        outside++;
        const answer = await upstream.forward(req, headers, requestBody.chunks, !requestBody.complete, halt, opened);
        upstream.relay(res, answer, [], true, cors);
        return answer.statusCode!;
      }
      const check = checker.check(op, req, url, arrival.headers, requestBody);
      const { violations, hide } = check;
      if (options.strict && violations.length > 0) {
        check.record();
        checked = true;
        options.onExchange?.(true);
        check.report();
        res.shouldKeepAlive &&= requestBody.complete;
        const lines = violations.map(({ line }) => clip(hide(line), LINE_CHARS)).join('; ');
        sendError(422, `the request breaks the document: ${lines}`, counted(cors, total(violations)));
        return 422;
      }
      const answer = await upstream.forward(req, headers, requestBody.chunks, !requestBody.complete, halt, opened);
      const answerBody = await collect(answer, CHECK_LIMIT, halt);
      const bytes = Buffer.concat(answerBody.chunks);
      const coding = answer.headers['content-encoding'];
      // An answer read whole is checked, decoded first if it is coded.
      let decoded = answerBody.complete ? bytes.toString('utf8') : undefined;
      if (decoded !== undefined && coding !== undefined) decoded = await decodedBody(bytes, coding, CHECK_LIMIT);
      check.answer(answer, decoded);
      check.record();
      checked = true;
      const { failure } = check;
      const bug = `${op.operationId} ${req.method} ${url.pathname}: ${failure}; this is a bug in gitea-mock`;
      if (failure !== undefined) options.onWarning?.(clip(hide(bug), LINE_CHARS));
      options.onExchange?.(failure === undefined ? true : 'check failed');
      check.report();
      upstream.relay(res, answer, answerBody.chunks, !answerBody.complete, counted(cors, total(violations)));
      return answer.statusCode!;
    } catch (error) {
      // After anything unexpected, the upstream connection is not reused.
      outgoing()?.destroy();
      if (op && !checked) {
        unanswered++;
        options.onExchange?.(false);
      }
      return upstream.failed(arrival, error as NodeJS.ErrnoException);
    }
  }

  return {
    pass,
    /** The exchanges outside the document, and those of the 20 operations the proxy answered itself. */
    counts: () => ({ outside, unanswered }),
    close: () => upstream.agent.destroy(),
  };
}
