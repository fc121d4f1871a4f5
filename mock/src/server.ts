// `gitea-mock`, the package's entry: the mock as a `node:http` server. What answers is composed
// here, top-down: the answering mock (answering-node.ts: the document, the source, the store, the
// deliveries), or the proxy in front of a real server, then the socket (front/node-server.ts). The
// proxy takes requests whole (it streams them to the upstream), with the same CORS and error
// dialect, conditions and journal, and the front lends it the router and its request check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FastResponse } from 'srvx/node';
import { createAnsweringMock } from './answering-node.js';
import { DOCUMENT } from './contract/document-file.js';
import type { Answer, FrontServices, PassThroughSource, ProxyReport } from './front/answer-source.js';
import { BASE_PATH } from './front/app.js';
import { checkAuthorization } from './front/auth.js';
import type { ConditionOptions } from './front/conditions.js';
import { allowList, corsHeaders, isPreflight, preflightHeaders, retryShortly, type HeaderOf } from './front/cors.js';
import { apiError, sendJson } from './front/errors.js';
import { faultAnswer } from './front/faults.js';
import { JOURNAL_PATH, journalAnswer } from './front/journal.js';
import { connectionBounds, fetchHandler, listen, reset, singleValued, type Sent } from './front/node-server.js';
import { underConditions } from './front/under-conditions.js';
import { queryOf, requestViolations, type PrismMethod } from './front/validation.js';
import type { SandboxChoices } from './answering.js';
import type { ProxyOptions } from './proxy/proxy.js';
import type { DeliveryRecord } from './webhooks/deliveries.js';

export { BASE_PATH };
export type { ProxyOptions, ProxyReport };
export const DEFAULT_DOCUMENT = DOCUMENT;

export interface MockOptions extends Omit<ConditionOptions, 'seed'> {
  /** The OpenAPI document to serve: a file (YAML or JSON), or the document as data; defaults to the package's `openapi.yaml`. */
  document?: string | Record<string, unknown>;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data, random delays and random faults repeatable: `7` and `'7'` are one seed, as `--seed 7` is. */
  seed?: string | number;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: MockSandboxOptions;
  /** Forward every request to a real server and check the exchanges against the document. */
  proxy?: ProxyOptions;
  /** Bytes of request bodies held at once, being read or waiting for their answer (default: an eighth of V8's heap). */
  maxBodyBytesInFlight?: number;
  /** One line per answered request; never given credentials. */
  onRequest?: (line: string) => void;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  onWarning?: (line: string) => void;
}

export interface MockSandboxOptions extends SandboxChoices {
  /** Keep the worlds in this folder, one file per world, or in the PostgreSQL database of this URL (`postgres://…`), shared by every process on it. */
  state?: string;
  webhooks?: SandboxChoices['webhooks'] & {
    /** Hosts deliveries may go to, in the syntax of Gitea's `[webhook] ALLOWED_HOST_LIST` (default `loopback`). */
    allowedHosts?: string;
    /** Longest a delivery may take, in milliseconds (default 5000, Gitea's `DELIVER_TIMEOUT`). */
    timeoutMs?: number;
    /** Each delivery once it is settled, a copy of its own; one that throws or rejects is told on the console. */
    onDelivery?: (delivery: DeliveryRecord) => unknown;
  };
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
  /** With `proxy`: what the exchanges came to so far, for a report (`--report` writes it as JSON). */
  proxyReport?(): ProxyReport;
  close(): Promise<void>;
}

/** Sends an answer the front made itself (the journal's). */
function sendAnswer(res: ServerResponse, answer: Answer, cors: Record<string, string>): number {
  const headers = { ...cors, ...answer.headers };
  if (answer.body === undefined) {
    res.writeHead(answer.status, { ...headers, 'Content-Length': '0', 'X-Content-Type-Options': 'nosniff' });
    res.end();
  } else sendJson(res, answer.status, answer.body, headers);
  return answer.status;
}

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const document = options.document ?? DEFAULT_DOCUMENT;
  const { ceiling, maxHeld } = connectionBounds(options.maxHeld);
  if (options.proxy && typeof document !== 'string') throw new TypeError('the proxy reads its document from a file');
  let origin = '';
  let docsUrl = '';
  const mock = await createAnsweringMock({ ...options, maxHeld }, () => docsUrl, FastResponse);
  const { table, conditions, journal, bodies } = mock;
  // The proxy's answer check (Ajv, the YAML document) is loaded only when it runs.
  const proxy: PassThroughSource | undefined = options.proxy
    ? await (await import('./proxy/proxy.js')).createProxy(document as string, options.proxy)
    : undefined;
  // In front of a real server, CORS from an allow-list only (cors.ts says why); checked before anything starts.
  const originAllowed = options.proxy ? allowList(options.proxy.corsOrigins ?? []) : undefined;

  /**
   * A request to the API through the proxy, under its conditions as in the other modes
   * (under-conditions.ts): a request that faults never reaches the upstream.
   */
  function conditioned(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    cors: Record<string, string>,
    forward: () => Promise<number>,
  ): Promise<Sent> {
    const method = req.method ?? 'GET';
    const route = table.route(method === 'HEAD' ? 'GET' : method, url.pathname.slice(BASE_PATH.length) || '/');
    const arrival = {
      method,
      url,
      authorization: req.headers.authorization,
      prefer: singleValued(req.headers).prefer,
      operationId: route.kind === 'match' ? route.op.operationId : undefined,
      signal: () => {
        const left = new AbortController();
        res.once('close', () => left.abort());
        return left.signal;
      },
    };
    return underConditions<Sent>({ conditions, journal }, arrival, {
      answer: async (prefer) => {
        if (prefer.ok) return forward();
        // The Prefer header is the mock's: one it cannot read is refused here, not passed on.
        req.resume();
        sendJson(res, 400, apiError(docsUrl, prefer.message), cors);
        return 400;
      },
      fault: (fault) => {
        req.resume();
        const { status, statusText, headers, body } = faultAnswer(fault, cors);
        const bytes = Buffer.from(body);
        res.writeHead(status, statusText, { ...headers, 'Content-Length': String(bytes.length) });
        res.end(bytes);
        return status;
      },
      refuse: ({ status, message }) => {
        req.resume();
        sendJson(res, status, apiError(docsUrl, message), retryShortly(cors));
        return status;
      },
      reset: () => reset(req),
      statusOf: (sent) => (sent === 'reset' ? null : sent),
    });
  }

  function proxyHandler(passThrough: PassThroughSource): (req: IncomingMessage, res: ServerResponse) => Promise<Sent> {
    const services: FrontServices = {
      route: (method, path) => {
        const route = table.route(method, path);
        return route.kind === 'match' ? route.op : undefined;
      },
      requestViolations: (op, url, headers, body, bodyRead) =>
        requestViolations(
          op,
          {
            method: op.method.toLowerCase() as PrismMethod,
            url: { path: url.pathname.slice(BASE_PATH.length), query: queryOf(url) },
            headers: singleValued(headers),
            body,
          },
          bodyRead,
        ),
      credentialProblem: (authorization, otp) => {
        const auth = checkAuthorization(authorization, otp);
        return auth.ok ? undefined : auth.message;
      },
      sendError: (res, status, message, headers) => sendJson(res, status, apiError(docsUrl, message), headers),
      bodies,
    };
    return async (req, res) => {
      const requestOrigin = req.headers.origin;
      if (requestOrigin !== undefined && !originAllowed!(requestOrigin)) {
        // Refused before anything reaches the upstream: a page of that origin gets no answer to read, and does nothing.
        req.resume();
        sendJson(
          res,
          403,
          apiError(
            docsUrl,
            `the proxy answers browser pages of this machine and of --cors-origin only, not of ${JSON.stringify(requestOrigin.slice(0, 100))}`,
          ),
        );
        return 403;
      }
      const headers = singleValued(req.headers);
      const header: HeaderOf = (name) => headers[name];
      if (isPreflight(req.method ?? 'GET', header)) {
        res.writeHead(204, preflightHeaders(header));
        res.end();
        req.resume();
        return 204;
      }
      const cors = corsHeaders(header);
      const url = URL.canParse(req.url ?? '/', 'http://proxy') ? new URL(req.url ?? '/', 'http://proxy') : undefined;
      const forward = (): Promise<number> => passThrough.passThrough(req, res, cors, services);
      if (url?.pathname === JOURNAL_PATH) {
        req.resume();
        return sendAnswer(res, journalAnswer(journal, req.method ?? 'GET', req.headers.authorization, docsUrl), cors);
      }
      if (url?.pathname !== BASE_PATH && !url?.pathname.startsWith(`${BASE_PATH}/`)) return forward();
      return conditioned(req, res, url, cors, forward);
    };
  }

  const { port, host, onRequest, onWarning: warn = () => {} } = options;
  const handler = proxy ? proxyHandler(proxy) : fetchHandler(mock.app, () => origin);
  const listening = await listen(handler, {
    port,
    host,
    ceiling,
    slowRequests: !!proxy,
    docsUrl: () => docsUrl,
    warn,
    onRequest,
  });
  origin = listening.origin;
  docsUrl = `${origin}/api/swagger`;
  return {
    origin,
    baseUrl: `${origin}${BASE_PATH}`,
    operations: table.operations,
    ...(proxy ? { proxyReport: () => proxy.report() } : {}),
    close: async () => {
      await listening.close();
      await mock.close();
      await proxy?.close?.();
    },
  };
}
