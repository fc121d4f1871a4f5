// The front on a `node:http` socket: bounded connections (idle ones closed), what Node's parser refuses, `Expect`,
// `CONNECT`, a missing or doubled `Host`, a failure as the one 500, and the log line; `handler` answers the rest.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { GiteaApp } from './app.js';
import { DEFAULT_MAX_HELD } from './conditions.js';
import { answerAndClose, defaultMaxConnections, IDLE_TIMEOUT_MS, limitConnections } from './connections.js';
import { apiError, failureLine, JSON_TYPE, MOCK_FAILURE, reasonPhrase } from './errors.js';

/** What a handler sent, for the log line: a status, or `reset` for a connection closed without an answer. */
export type Sent = number | 'reset';
type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<Sent>;

interface SocketOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** Most connections open at once. */
  ceiling: number;
  /** A proxy's uploads may take their time: no bound on a whole request. */
  slowRequests: boolean;
  docsUrl(): string;
  warn(line: string): void;
  onRequest?: ((line: string) => void) | undefined;
}

/** The connections kept open, and the requests held for a delay below them: half at most by default, so the others always find connections. */
export function connectionBounds(held: number | undefined): { ceiling: number; maxHeld: number } {
  const ceiling = defaultMaxConnections();
  const maxHeld = held ?? Math.min(DEFAULT_MAX_HELD, Math.floor(ceiling / 2));
  if (maxHeld >= ceiling)
    throw new TypeError(
      `maxHeld (--max-held) ${maxHeld} must be fewer than the ${ceiling} connections this server keeps open, or held requests could take every one`,
    );
  return { ceiling, maxHeld };
}

/** Sends a JSON body the way an official Gitea build does (Go's JSON v2): compact, no trailing newline, with nosniff. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { ...headers, ...jsonHeaders(payload.length) });
  res.end(payload);
}

const jsonHeaders = (length: number) => ({
  'Content-Type': JSON_TYPE,
  'Content-Length': String(length),
  'X-Content-Type-Options': 'nosniff',
});

const SAFE_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

export function singleValued(headers: IncomingMessage['headers']): Record<string, string> {
  const values = Object.entries(headers).filter(
    (entry): entry is [string, string | string[]] => entry[1] !== undefined,
  );
  return Object.fromEntries(values.map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
}

/** The fault `reset`, or a client that left while its request was held: the connection goes without an answer. */
export function reset(req: IncomingMessage): 'reset' {
  req.socket.resetAndDestroy();
  return 'reset';
}

/** The Fetch front as a handler; `origin` is this server's, for a Host that is no host name. */
export function fetchHandler(app: GiteaApp, origin: () => string): Handler {
  return async (req, res) => {
    // Links in answers are built on the host the client used; a Host that is no host name gives this server's own.
    if (!SAFE_HOST.test(req.headers.host ?? '')) req.headers.host = new URL(origin()).host;
    const response = await app.fetch(new NodeRequest({ req, res }));
    // `Response.error()`, the front's word for a reset, read by its status (see app.ts' statusOf).
    if (response.status === 0) return reset(req);
    await sendNodeResponse(res, response);
    return res.statusCode;
  };
}

export async function listen(
  handler: Handler,
  options: SocketOptions,
): Promise<{ origin: string; close(): Promise<void> }> {
  const { docsUrl } = options;
  const sendError = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
    sendJson(res, status, apiError(docsUrl(), message), headers);
  const path = (req: IncomingMessage) => req.url?.split('?')[0];

  /** Answers with `answer`, turning a failure into the one 500, and logs the line (the path only: a query may carry `token=`). */
  function respond(req: IncomingMessage, res: ServerResponse, answer: Handler): void {
    if (connections.refused(req.socket)) return;
    const started = performance.now();
    answer(req, res)
      .catch((error: unknown) => {
        options.warn(failureLine(req.method, req.url, error));
        try {
          if (res.headersSent) throw new Error('an answer is on its way');
          res.statusMessage = '';
          sendError(res, 500, MOCK_FAILURE);
        } catch {
          // The last resort: one connection goes, never the process.
          res.destroy();
        }
        return 500;
      })
      .then((status) =>
        options.onRequest?.(`${req.method} ${path(req)} ${status} ${Math.round(performance.now() - started)}ms`),
      );
  }

  /** Node's own refusal (requireHostHeader) is an empty 400, and Node keeps the first of two Host headers; Go's net/http refuses both requests. */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<Sent> {
    const hosts = req.rawHeaders.filter((name, index) => index % 2 === 0 && name.toLowerCase() === 'host').length;
    const refusal =
      req.httpVersion === '1.1' && hosts === 0
        ? 'missing required Host header'
        : hosts > 1
          ? 'too many Host headers'
          : undefined;
    if (refusal === undefined) return handler(req, res);
    req.resume();
    sendError(res, 400, refusal, { Connection: 'close' });
    return 400;
  }

  const server = createServer(
    {
      // A connection that sends no request head within IDLE_TIMEOUT_MS, or stays idle as long between requests, is
      // closed, checked every second (Node's default is every 30 s).
      requestTimeout: options.slowRequests ? 0 : 30_000,
      headersTimeout: IDLE_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
      // Refused by `handle` instead, in the dialect.
      requireHostHeader: false,
    },
    (req, res) => respond(req, res, handle),
  );
  /** A raw HTTP/1.1 error for sockets Node's parser gave up on, where no ServerResponse exists. */
  const raw = (status: number, message: string, headers: string[] = []) => {
    const payload = JSON.stringify(apiError(docsUrl(), message));
    const json = Object.entries(jsonHeaders(Buffer.byteLength(payload))).map(([name, value]) => `${name}: ${value}`);
    return `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${[...headers, ...json, 'Connection: close'].join('\r\n')}\r\n\r\n${payload}`;
  };
  const connections = limitConnections(server, options.ceiling, () =>
    raw(503, 'too many connections are busy; try again shortly', ['Retry-After: 1']),
  );
  // Node answers any Expect but 100-continue with an empty 417; Go's net/http refuses it too.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    respond(req, res, async () => {
      req.resume();
      const expect = String(req.headers.expect).slice(0, 100);
      sendError(res, 417, `Expect: ${expect} cannot be met; only 100-continue is supported`, { Connection: 'close' });
      return 417;
    }),
  );
  // Without a listener Node closes a CONNECT's connection without a word. No tunnels here.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerAndClose(socket, raw(405, 'CONNECT is not allowed: this server opens no tunnels'));
    options.onRequest?.(`CONNECT ${path(req)} 405 0ms`);
  });
  // Requests Node's parser refuses (bad bytes or oversized headers, timeouts) never reach the handler.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (connections.refused(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers are too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'the request took too long']
          : [400, 'malformed HTTP request'];
    answerAndClose(socket, raw(status, message));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: bursts of thousands of connections are queued, not reset.
    server.listen({ port: options.port ?? 4010, host: options.host ?? '127.0.0.1', backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    origin: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
