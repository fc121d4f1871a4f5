// The mock as a `node:http` server: the Fetch-API front (app.ts) behind srvx's Node adapter, plus
// what only a socket server has to care about: connections (bounded, idle ones closed), requests
// Node's parser refuses, `Expect`, `CONNECT`, a missing `Host`, and the log line. The proxy takes
// requests whole on node:http (proxy/proxy.ts), handed the front's router, conditions and journal.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FastResponse, NodeRequest, sendNodeResponse } from 'srvx/node';
import { BASE_PATH, isNetworkError } from './front/app.js';
import { createAnsweringMock, type AnsweringOptions } from './answering-node.js';
import { answerAndClose, defaultMaxConnections, IDLE_TIMEOUT_MS, limitConnections } from './front/connections.js';
import { DEFAULT_MAX_HELD } from './front/conditions.js';
import { DOCUMENT } from './contract/document-file.js';
import { apiError, rawErrorResponse, sendJson } from './front/errors.js';
import type { ProxyOptions } from './proxy/proxy.js';

export { BASE_PATH };
export const DEFAULT_DOCUMENT = DOCUMENT;

export interface MockOptions extends AnsweringOptions {
  /** The OpenAPI document to serve (a YAML or JSON file); defaults to the package's `openapi.yaml`. */
  document?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Forward every request to a real server and check the exchanges against the document. */
  proxy?: ProxyOptions;
  /** One line per answered request; never given credentials. */
  onRequest?: (line: string) => void;
}

/** An operation the mock serves, as the document names it. */
export interface ServedOperation {
  operationId: string;
  /** Upper case: `GET`, `PATCH` … */
  method: string;
  /** The path template below /api/v1, such as `/repos/{owner}/{repo}/hooks/{id}`. */
  path: string;
}

export interface MockServer {
  /** `http://host:port` */
  origin: string;
  /** `http://host:port/api/v1`, the base URL clients use. */
  baseUrl: string;
  operations: readonly ServedOperation[];
  close(): Promise<void>;
}

/** What a handler sent, for the log line: a status, or `reset` for a connection closed without an answer. */
type Sent = number | 'reset';

const SAFE_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const document = options.document ?? DEFAULT_DOCUMENT;
  const warn = options.onWarning ?? (() => {});
  let origin = '';
  let docsUrl = '';
  // Requests held for a delay stay below the connections: half of them at most, so the others
  // always find connections to answer on.
  const ceiling = defaultMaxConnections();
  const maxHeld = options.maxHeld ?? Math.min(DEFAULT_MAX_HELD, Math.floor(ceiling / 2));
  if (maxHeld >= ceiling)
    throw new TypeError(
      `maxHeld (--max-held) ${maxHeld} must be fewer than the ${ceiling} connections this server keeps open, or held requests could take every one`,
    );
  const {
    app,
    table,
    conditions,
    journal,
    bodies,
    close: closeSource,
  } = await createAnsweringMock({ ...options, maxHeld }, () => docsUrl, FastResponse);
  // The proxy (its own request path on node:http, its answer check) is loaded only when it runs.
  const proxy = options.proxy
    ? await (await import('./proxy/proxy.js')).createProxy(document, options.proxy, {
        table,
        conditions,
        journal,
        bodies,
        docsUrl: () => docsUrl,
      })
    : undefined;

  /** Answers a request whole; resolves with what was sent, for the log line. */
  const handler = proxy ? proxy.handle : appHandler();

  function appHandler(): (req: IncomingMessage, res: ServerResponse) => Promise<Sent> {
    return async (req, res) => {
      // Links in answers are built on the host the client used; a Host that is no host name gives this server's own.
      if (!SAFE_HOST.test(req.headers.host ?? '')) req.headers.host = new URL(origin).host;
      const response = await app.fetch(new NodeRequest({ req, res }));
      if (isNetworkError(response)) return reset(req);
      await sendNodeResponse(res, response);
      return res.statusCode;
    };
  }

  /** The fault `reset`: the connection goes without an answer. */
  function reset(req: IncomingMessage): 'reset' {
    req.socket.resetAndDestroy();
    return 'reset';
  }

  /** Answers with `answer`, turning a failure into a 500, and logs the line. */
  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    answer: (req: IncomingMessage, res: ServerResponse) => Promise<Sent>,
  ): void {
    if (connections.refused(req.socket)) return;
    const started = performance.now();
    answer(req, res)
      .catch((error: unknown) => {
        warn(
          `mock failure on ${req.method} ${req.url?.split('?')[0]}: ${error instanceof Error ? error.stack : String(error)}`,
        );
        try {
          if (res.headersSent) throw new Error('an answer is on its way');
          res.statusMessage = '';
          sendJson(res, 500, apiError(docsUrl, 'the mock failed to answer; this is a bug in gitea-mock'));
        } catch {
          // The last resort: one connection goes, never the process.
          res.destroy();
        }
        return 500;
      })
      .then((status) => {
        // The path only: query strings can carry `token=` credentials.
        options.onRequest?.(
          `${req.method} ${req.url?.split('?')[0]} ${status} ${Math.round(performance.now() - started)}ms`,
        );
      });
  }

  /**
   * Node's own refusal (requireHostHeader) is an empty 400, and Node keeps the first of two Host
   * headers; Go's net/http refuses both requests.
   */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<Sent> {
    const hosts = req.rawHeaders.filter(
      (_, index) => index % 2 === 0 && req.rawHeaders[index]!.toLowerCase() === 'host',
    ).length;
    const refusal =
      req.httpVersion === '1.1' && hosts === 0
        ? 'missing required Host header'
        : hosts > 1
          ? 'too many Host headers'
          : undefined;
    if (refusal !== undefined) {
      req.resume();
      sendJson(res, 400, apiError(docsUrl, refusal), { Connection: 'close' });
      return 400;
    }
    return handler(req, res);
  }

  const server = createServer(
    {
      // Slow or stuck clients cannot hold sockets for long (a proxy's uploads may take their time):
      // a connection that sends no request head within IDLE_TIMEOUT_MS, or stays idle as long
      // between requests, is closed, checked every second (Node's default is every 30 s).
      requestTimeout: proxy ? 0 : 30_000,
      headersTimeout: IDLE_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      // Headers are capped at 16 KiB.
      maxHeaderSize: 16 * 1024,
      // Refused by the handler instead, in the dialect.
      requireHostHeader: false,
    },
    (req, res) => respond(req, res, handle),
  );
  const connections = limitConnections(server, ceiling, () =>
    rawErrorResponse(503, apiError(docsUrl, 'too many connections are busy; try again shortly'), ['Retry-After: 1']),
  );
  // Node answers any Expect but 100-continue with an empty 417; Go's net/http refuses it too.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    respond(req, res, async () => {
      req.resume();
      sendJson(
        res,
        417,
        apiError(
          docsUrl,
          `Expect: ${String(req.headers.expect).slice(0, 100)} cannot be met; only 100-continue is supported`,
        ),
        { Connection: 'close' },
      );
      return 417;
    }),
  );
  // Without a listener Node closes a CONNECT's connection without a word. No tunnels here.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerAndClose(
      socket,
      rawErrorResponse(405, apiError(docsUrl, 'CONNECT is not allowed: this server opens no tunnels')),
    );
    options.onRequest?.(`CONNECT ${req.url?.split('?')[0]} 405 0ms`);
  });
  // Requests Node's parser refuses (CR/LF or bad bytes in headers, oversized headers, timeouts)
  // never reach the handler; answer them in the same dialect and close.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (connections.refused(socket)) return;
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message =
      status === 431
        ? 'request headers are too large'
        : status === 408
          ? 'the request took too long'
          : 'malformed HTTP request';
    answerAndClose(socket, rawErrorResponse(status, apiError(docsUrl, message)));
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
  origin = `http://${host}:${address.port}`;
  docsUrl = `${origin}/api/swagger`;

  return {
    origin,
    baseUrl: `${origin}${BASE_PATH}`,
    operations: table.operations,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(async () => {
        await closeSource();
        await proxy?.close();
      }),
  };
}
