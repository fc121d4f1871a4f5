// The front on a `node:http` socket: bounded connections, what Node's parser refuses, `Expect`, `CONNECT`, `Host`.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import { attempt } from '../common/attempt.js';
import type { GiteaApp } from './app.js';
import { DEFAULT_MAX_HELD } from './conditions.js';
import { apiError, failureLine, JSON_TYPE, MOCK_FAILURE, reasonPhrase } from './errors.js';

const IDLE_TIMEOUT_MS = 5_000;
export const TEXT = 'text/plain; charset=utf-8';

/** Fewer where the process may open fewer files: past that, Node drops new connections before idle ones close. */
export function defaultMaxConnections(): number {
  // /proc is Linux's; elsewhere no file limit is read.
  const limits = attempt(() => readFileSync('/proc/self/limits', 'utf8'));
  const soft = /^Max open files\s+(\S+)/m.exec(limits ?? '')?.[1];
  const files = soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
  return Math.max(16, Math.min(4_096, files - 128));
}

function answerAndClose(socket: Duplex, answer: string): void {
  socket.on('error', () => {});
  if (socket.writable) socket.end(answer);
  setTimeout(() => socket.destroy(), 1_000).unref();
}

function limitConnections(server: Server, ceiling: number, refusal: () => string) {
  // The longest idle first (a Map keeps insertion order).
  const idle = new Map<Socket, true>();
  const inProgress = new Map<Socket, number>();
  const refused = new WeakSet<Socket>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => {
      open--;
      idle.delete(socket);
      inProgress.delete(socket);
    });
    if (open > ceiling) {
      const longest = idle.keys().next();
      if (longest.done) {
        refused.add(socket);
        return answerAndClose(socket, refusal());
      }
      idle.delete(longest.value);
      longest.value.destroy();
    }
    idle.set(socket, true);
  });
  const begin = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    if (refused.has(socket)) return;
    idle.delete(socket);
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inProgress.get(socket) ?? 1) - 1;
      if (left > 0) inProgress.set(socket, left);
      else {
        inProgress.delete(socket);
        if (!socket.destroyed) idle.set(socket, true);
      }
    });
  };
  server.on('request', begin);
  server.on('checkExpectation', begin);
  return { refused: (socket: Socket) => refused.has(socket) };
}

export type Sent = number | 'reset';
type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<Sent>;

interface SocketOptions {
  port?: number | undefined;
  host?: string | undefined;
  ceiling: number;
  slowRequests: boolean;
  /** The link of a refusal's `APIError`; without one a refusal is a line of text (the webhook receiver's). */
  docsUrl?(): string;
  /** The 503's message past `ceiling` connections. */
  busy?: string;
  warn(line: string): void;
  onRequest?: ((line: string) => void) | undefined;
}

/** Held requests take half the connections at most by default, so the others always find connections. */
export function connectionBounds(held: number | undefined): { ceiling: number; maxHeld: number } {
  const ceiling = defaultMaxConnections();
  const maxHeld = held ?? Math.min(DEFAULT_MAX_HELD, Math.floor(ceiling / 2));
  if (maxHeld >= ceiling)
    throw new TypeError(
      `maxHeld (--max-held) ${maxHeld} must be fewer than the ${ceiling} connections this server keeps open, or held requests could take every one`,
    );
  return { ceiling, maxHeld };
}

/** As an official Gitea build does (Go's JSON v2): compact, no trailing newline, with nosniff. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { ...headers, ...jsonHeaders(payload.length) }).end(payload);
}

const jsonHeaders = (length: number) => ({
  'Content-Type': JSON_TYPE,
  'Content-Length': String(length),
  'X-Content-Type-Options': 'nosniff',
});

const PARSER_REFUSALS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request took too long'],
};

const SAFE_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

export function singleValued(headers: IncomingMessage['headers']): Record<string, string> {
  const single: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) single[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return single;
}

export function reset(req: IncomingMessage): 'reset' {
  req.socket.resetAndDestroy();
  return 'reset';
}

export function fetchHandler(app: GiteaApp, origin: () => string): Handler {
  return async (req, res) => {
    // Links in answers are built on the host the client used; a Host that is no host name gives this server's own.
    if (!SAFE_HOST.test(req.headers.host ?? '')) req.headers.host = new URL(origin()).host;
    const response = await app.fetch(new NodeRequest({ req, res }));
    // `Response.error()`, the front's word for a reset (see app.ts' statusOf).
    if (response.status === 0) return reset(req);
    await sendNodeResponse(res, response);
    return res.statusCode;
  };
}

export async function listen(handler: Handler, options: SocketOptions) {
  const { docsUrl } = options;
  const refusal = (message: string): [string, Record<string, string>] => {
    const payload = docsUrl ? JSON.stringify(apiError(docsUrl(), message)) : `${message}\n`;
    const length = Buffer.byteLength(payload);
    return [payload, docsUrl ? jsonHeaders(length) : { 'Content-Type': TEXT, 'Content-Length': String(length) }];
  };
  const sendError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    const [payload, own] = refusal(message);
    res.writeHead(status, { ...headers, ...own }).end(payload);
  };
  const path = (req: IncomingMessage) => req.url?.split('?')[0];

  // The path only: a query may carry `token=`.
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
    let hosts = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
    if (hosts === 1 || (hosts === 0 && req.httpVersion !== '1.1')) return handler(req, res);
    req.resume();
    sendError(res, 400, hosts ? 'too many Host headers' : 'missing required Host header', { Connection: 'close' });
    return 400;
  }

  const server = createServer(
    {
      requestTimeout: options.slowRequests ? 0 : 30_000,
      headersTimeout: IDLE_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
      requireHostHeader: false,
    },
    (req, res) => respond(req, res, handle),
  );
  const raw = (status: number, message: string, headers: string[] = []) => {
    const [payload, own] = refusal(message);
    const lines = Object.entries(own).map(([name, value]) => `${name}: ${value}`);
    return `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${[...headers, ...lines, 'Connection: close'].join('\r\n')}\r\n\r\n${payload}`;
  };
  const busy = options.busy ?? 'too many connections are busy; try again shortly';
  const connections = limitConnections(server, options.ceiling, () => raw(503, busy, ['Retry-After: 1']));
  // Node answers any Expect but 100-continue with an empty 417; Go's net/http refuses it too.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    respond(req, res, async () => {
      req.resume();
      const expect = String(req.headers.expect).slice(0, 100);
      sendError(res, 417, `Expect: ${expect} cannot be met; only 100-continue is supported`, { Connection: 'close' });
      return 417;
    }),
  );
  // Without a listener Node closes a CONNECT's connection without a word.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerAndClose(socket, raw(405, 'CONNECT is not allowed: this server opens no tunnels'));
    options.onRequest?.(`CONNECT ${path(req)} 405 0ms`);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (connections.refused(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const [status, message] = PARSER_REFUSALS[error.code ?? ''] ?? [400, 'malformed HTTP request'];
    answerAndClose(socket, raw(status, message));
  });

  server.listen({ port: options.port ?? 4010, host: options.host ?? '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
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
