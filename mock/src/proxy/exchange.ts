// One exchange through the proxy: forwarded as it came, within its bounds, checked, relayed or answered itself.
import * as http from 'node:http';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { networkFailure } from '../common/network-failure.js';
import { Refusal } from '../common/refusal.js';
import { originFormRefusal } from '../common/request-target.js';
import { clip, total } from '../contract/exchange-report.js';
import type { BodyBudget, BodyReading } from '../front/body.js';
import { exposing, retryShortly } from '../front/cors.js';
import type { MockOperation } from '../front/operations.js';
import type { Checker } from './check.js';
import type { ProxyOptions } from './proxy.js';

/** Bodies up to this size are read whole and checked; larger ones stream through unchecked. */
const CHECK_LIMIT = 10 * 1024 * 1024;

export interface Arrival {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL | undefined;
  headers: Record<string, string>;
  cors: Record<string, string>;
  op: MockOperation | undefined;
  sendError(status: number, message: string, headers: Record<string, string>): void;
}

/** A body read; `complete` is false past the limit, the rest still in the stream, paused. */
export type Collected = { chunks: Buffer[]; complete: boolean };

/** An exchange's halt: the first reason ends it, told once to each listener; an AbortController costs a tenth of the proxy's CPU.
 * Listeners stay until then, as the exchange's requests do: one whose work is done does nothing. */
class Halt {
  reason: Error | undefined;
  #listeners: ((reason: Error) => void)[] = [];
  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    for (const listener of this.#listeners.splice(0)) listener(reason);
  }
  on(listener: (reason: Error) => void): void {
    this.#listeners.push(listener);
  }
}

/** A body up to CHECK_LIMIT bytes, a request's taken from the server's budget (`reading`) as they arrive; rejects on a halt. */
function collect(stream: Readable, halt: Halt, reading?: BodyReading): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (then: () => void): void => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      then();
    };
    const onError = (error: Error): void => settle(() => reject(halt.reason ?? error));
    const onEnd = (): void => settle(() => resolve({ chunks, complete: true }));
    const onData = (chunk: Buffer): void => {
      const refusal = reading?.take(chunk.length);
      if (!refusal) chunks.push(chunk);
      size += chunk.length;
      if (!refusal && size <= CHECK_LIMIT) return;
      stream.pause();
      settle(() =>
        refusal ? reject(new Refusal(refusal.status, refusal.message)) : resolve({ chunks, complete: false }),
      );
    };
    if (halt.reason) return reject(halt.reason);
    halt.on(onError);
    stream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/** The codings an answer is decoded from to be checked: gzip is Gitea's, the others Node's fetch asks for too. */
type Decoder = typeof gunzip;
const DECODERS: Record<string, Decoder> = { gzip: gunzip, 'x-gzip': gunzip, deflate: inflate, br: brotliDecompress };

/** The body decoded (codings in the order applied) to at most CHECK_LIMIT bytes; undefined when it cannot be: unchecked. */
async function decodedBody(bytes: Buffer, encoding: string): Promise<string | undefined> {
  let body: Buffer | undefined = bytes;
  for (const coding of encoding.split(',').reverse()) {
    const name = coding.trim().toLowerCase();
    if (name === '' || name === 'identity') continue;
    const decode = DECODERS[name];
    body = decode && (await promisify(decode)(body, { maxOutputLength: CHECK_LIMIT }).catch(() => undefined));
    if (!body) return undefined;
  }
  return body.toString('utf8');
}

/** Connection-level headers, which a proxy never passes on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(
  'connection keep-alive proxy-authenticate proxy-authorization proxy-connection te trailer transfer-encoding upgrade'.split(
    ' ',
  ),
);

function endToEnd(raw: readonly string[], drop: (name: string) => boolean): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === 'connection')
      for (const option of raw[i + 1]!.split(',')) named.add(option.trim().toLowerCase());
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name) && !drop(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

/** Why Node would refuse to write these headers (as `writeHead` checks); names the header, never its value. */
function headersProblem(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    try {
      http.validateHeaderName(raw[i]!);
      http.validateHeaderValue(raw[i]!, raw[i + 1]!);
    } catch (error) {
      const quoted = JSON.stringify(clip(raw[i]!, 40));
      return (error as NodeJS.ErrnoException).code === 'ERR_INVALID_HTTP_TOKEN'
        ? `the header name ${quoted} is not an HTTP token`
        : `the header ${quoted} holds a character HTTP does not allow`;
    }
  }
  return undefined;
}

function statusProblem(status: number | undefined, reason: string | undefined): string | undefined {
  if (status === undefined || status < 100 || status > 999)
    return `the status ${status ?? '(none)'} is not a three-digit code`;
  try {
    // A reason phrase takes the characters of a header value (Node checks both alike).
    http.validateHeaderValue('status', reason ?? '');
  } catch {
    return 'the reason phrase holds a character HTTP does not allow';
  }
  return undefined;
}

const counted = (cors: Record<string, string>, count: number): Record<string, string> => ({
  ...exposing(cors, 'X-Contract-Violations'),
  'X-Contract-Violations': String(count),
});

/** The exchange failing: the proxy's own refusal, else 502 naming the network failure, in the error dialect. */
function failed({ req, res, cors, sendError }: Arrival, host: string, error: NodeJS.ErrnoException): number {
  const status = error instanceof Refusal ? error.status : 502;
  if (res.headersSent) {
    // Part of the answer is out: the client must see it cut short, never wait for the rest.
    res.destroy();
    return status;
  }
  const { code, tls, advice } = networkFailure(error);
  const message =
    error instanceof Refusal
      ? error.message
      : `the upstream ${host} failed: ${code ?? error.message}${tls ? ` (TLS: ${tls}${advice ? `: ${advice}` : ''})` : ''}`;
  // A request whose body was not read to its end leaves the connection unusable.
  res.shouldKeepAlive &&= req.complete;
  // A clean reason phrase: `writeHead` keeps the one it last stored, even one it refused.
  res.statusMessage = '';
  // A 503 is the budget of bodies, which frees itself as other requests end.
  sendError(status, message, status === 503 ? retryShortly(cors) : cors);
  return status;
}

function relay(host: string, res: ServerResponse, answer: IncomingMessage, cors: Arrival['cors'], body?: Collected) {
  // Checked before anything is written: `writeHead` throws on what Node's parser let through.
  const problem = statusProblem(answer.statusCode, answer.statusMessage) ?? headersProblem(answer.rawHeaders);
  if (problem) throw new Refusal(502, `the upstream ${host} sent an answer that cannot be passed on: ${problem}`);
  // The mock's CORS stands in for the upstream's: the browser talks to the proxy's origin.
  const headers = endToEnd(answer.rawHeaders, (name) => name.startsWith('access-control-'));
  for (const [name, value] of Object.entries(cors)) headers.push(name, value);
  res.writeHead(answer.statusCode!, answer.statusMessage, headers);
  for (const chunk of body?.chunks ?? []) res.write(chunk);
  // A stream the upstream cuts, or the proxy halts, destroys the client's connection with it.
  if (body?.complete) res.end();
  else pipeline(answer, res, () => {});
  return answer.statusCode!;
}

export function createExchanges(upstream: URL, options: ProxyOptions, checker: Checker, bodies: BodyBudget) {
  const { host, protocol, hostname, port } = upstream;
  const connections = options.upstreamConnections ?? 64;
  const { request, Agent } = protocol === 'https:' ? https : http;
  const send = request as typeof http.request;
  // Kept and reused, to a ceiling slow clients cannot take: a connection per request costs more than all else here.
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxTotalSockets: connections });
  const target = { protocol, hostname, port, agent, timeout: options.timeoutMs ?? 30_000 };
  const exchangeTimeoutMs = options.exchangeTimeoutMs ?? 300_000;
  const longest = `${exchangeTimeoutMs / 1000} s`;
  const silence = `${target.timeout / 1000} s`;
  let outside = 0;
  let unanswered = 0;

  /** The exchange's bounds and its one upstream request: the whole length and a stalled upload each halt it, as does the client leaving. */
  function openExchange({ req, res }: Arrival, chunked: boolean, bodyless: boolean) {
    const headers = [
      ...endToEnd(req.rawHeaders, (name) => name === 'host' || (name === 'cookie' && !options.forwardCookies)),
      ...['Host', host, ...(chunked ? ['Transfer-Encoding', 'chunked'] : [])],
    ];
    const halt = new Halt();
    const reading = bodies.reading();
    let outgoing: ClientRequest | undefined;
    const whole = setTimeout(() => {
      const what = req.complete ? `the exchange with the upstream ${host}` : 'the request';
      halt.abort(new Refusal(req.complete ? 504 : 408, `${what} took longer than ${longest}`));
    }, exchangeTimeoutMs);
    const upload = bodyless
      ? undefined
      : setTimeout(function stalled() {
          // Paused, it waits for the upstream to read, which is the upstream's silence to judge.
          if (req.isPaused()) upload?.refresh();
          else halt.abort(new Refusal(408, `the request body stalled: no byte for ${silence}`));
        }, target.timeout);
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
    const forward = ({ chunks, complete }: Collected): Promise<IncomingMessage> =>
      new Promise((resolve, reject) => {
        if (halt.reason) return reject(halt.reason);
        // The path as the client sent it, not normalised: the upstream is the one to judge it.
        const sent = send({ ...target, path: req.url ?? '/', method: req.method, headers }, resolve);
        outgoing = sent;
        // For the exchange's lifetime: an error after the answer came is the answer's stream's to report.
        sent.on('error', reject);
        sent.on('timeout', () => halt.abort(new Refusal(504, `the upstream ${host} sent nothing for ${silence}`)));
        halt.on((reason) => sent.destroy(reason));
        for (const chunk of chunks) sent.write(chunk);
        if (complete) sent.end();
        else req.pipe(sent);
      });
    return { halt, reading, forward, destroy: () => outgoing?.destroy() };
  }

  async function pass(arrival: Arrival): Promise<number> {
    const { req, res, cors, op, url, sendError } = arrival;
    // Chunked is set explicitly: Node frames no body of a GET or DELETE, which the upstream would read as a request.
    const coding = req.headers['transfer-encoding'];
    const chunked = coding?.trim().toLowerCase() === 'chunked';
    const refusal =
      originFormRefusal(req.url, '/api/v1/version', { server: 'proxy', host }) ??
      (coding !== undefined && !chunked
        ? `the request's Transfer-Encoding is ${JSON.stringify(coding.slice(0, 40))}: the proxy forwards chunked alone or a Content-Length, so that the upstream reads the body as it was sent`
        : headersProblem(req.rawHeaders));
    if (refusal !== undefined) {
      // Nothing of a request whose body cannot be framed is forwarded, nor is its connection kept.
      res.shouldKeepAlive = false;
      sendError(400, refusal, cors);
      req.resume();
      return 400;
    }
    // Without Content-Length or Transfer-Encoding a request has no body (RFC 9112 §6.3).
    const bodyless = coding === undefined && (req.headers['content-length'] ?? '0') === '0';
    const { halt, reading, forward, destroy } = openExchange(arrival, chunked, bodyless);
    let checked = false;
    try {
      // Read before an upstream connection is taken: a client that uploads a byte at a time holds its own only.
      const declared = reading.declared(Math.min(Number(req.headers['content-length'] ?? 0), CHECK_LIMIT));
      if (declared) throw new Refusal(declared.status, declared.message);
      const requestBody = bodyless ? { chunks: [], complete: true } : await collect(req, halt, reading);
      if (bodyless) req.resume();
      // A target URL cannot parse (`//x:99999/`) names no operation either: the upstream answers it.
      if (!op || !url) {
        outside++;
        return relay(host, res, await forward(requestBody), cors);
      }
      const check = checker.check(op, req, url, arrival.headers, requestBody);
      if (options.strict && check.violations.length > 0) {
        checked = true;
        check.conclude(false);
        res.shouldKeepAlive &&= requestBody.complete;
        sendError(422, `the request breaks the document: ${check.lines()}`, counted(cors, total(check.violations)));
        return 422;
      }
      const answer = await forward(requestBody);
      const answerBody = await collect(answer, halt);
      const bytes = Buffer.concat(answerBody.chunks);
      const encoding = answer.headers['content-encoding'];
      // Most answers are not encoded: no turn of the event loop for them.
      const decoded = !answerBody.complete
        ? undefined
        : encoding === undefined
          ? bytes.toString('utf8')
          : await decodedBody(bytes, encoding);
      check.answer(answer, decoded);
      checked = true;
      check.conclude(true);
      return relay(host, res, answer, counted(cors, total(check.violations)), answerBody);
    } catch (error) {
      destroy();
      if (op && !checked) {
        unanswered++;
        options.onExchange?.(false);
      }
      return failed(arrival, host, error as NodeJS.ErrnoException);
    }
  }

  return { pass, counts: () => ({ outside, unanswered }), close: () => agent.destroy() };
}
