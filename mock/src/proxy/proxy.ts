// The proxy (`gitea-mock proxy <url>`) on node:http, header names and order byte for byte (Prism's re-serialises).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost } from 'gitea-contract/internal';
import { isForgejo } from '../contract/document.js';
import type { createExchangeReport } from '../contract/exchange-report.js';
import { BASE_PATH } from '../front/app.js';
import type { BodyBudget } from '../front/body.js';
import { type Conditions, faultAnswer, underConditions } from '../front/conditions.js';
import { allowList, corsHeaders, isPreflight, preflightHeaders, retryShortly, type HeaderOf } from '../front/cors.js';
import { apiError } from '../front/errors.js';
import { type Journal, JOURNAL_PATH, journalAnswer } from '../front/journal.js';
import type { OperationTable } from '../front/operations.js';
import { reset, sendJson, type Sent, singleValued } from '../front/node-server.js';
import { createChecker } from './check.js';
import { createExchanges } from './exchange.js';
import type { ServerProfile } from 'gitea-contract';

export interface ProxyOptions {
  /** The upstream's origin, such as `https://gitea.example.org`; paths are kept, /api/v1 included. */
  upstream: string;
  /** Refuse a request that breaks the document with the mock's 422 instead of forwarding it. */
  strict?: boolean;
  /** Allow a plain-http upstream on another machine (loopback is always allowed). */
  allowInsecureUpstream?: boolean;
  /** Longest silence of the upstream or of a client's upload (default 30 000 ms). */
  timeoutMs?: number;
  /** Longest exchange, from the request's arrival to the answer's last byte (default 300 000 ms). */
  exchangeTimeoutMs?: number;
  /** Most connections open to the upstream at once; further requests wait for one (default 64). */
  upstreamConnections?: number;
  /** Browser origins answered with CORS besides this machine's; others are refused. */
  corsOrigins?: readonly string[];
  /** Forward the `Cookie` header (a signed-in web session) to the upstream; off by default. */
  forwardCookies?: boolean;
  /** What the upstream says it is (`Forgejo 11.0.3+gitea-1.22.0`, detectServer's), for the report. */
  upstreamServer?: string;
  /** One line per exchange with violations; never holds a credential. */
  onViolations?: (line: string) => void;
  /** Each exchange of the 20 operations: checked, answered by the proxy itself (`false`), or its check threw. */
  onExchange?: (checked: boolean | 'check failed') => void;
  /** A failure of the proxy itself, such as a check that threw; never holds a credential. */
  onWarning?: (line: string) => void;
}

/** What the exchanges came to: per operation, those the proxy answered itself, and those outside the document. */
export interface ProxyReport {
  upstream: string;
  /** The profile the exchanges were checked against, and what the upstream said it is. */
  checkedAs?: { profile: ServerProfile; server?: string };
  started: string;
  finished: string;
  operations: ReturnType<ReturnType<typeof createExchangeReport>['byName']>;
  notAnswered: { exchanges: number };
  notInContract: { exchanges: number };
}

type ProxyFront = {
  table: OperationTable;
  conditions: Conditions;
  journal: Journal;
  bodies: BodyBudget;
  docsUrl(): string;
};

/** The upstream origin, or why it cannot be one; credentials go to it, so it must be https unless allowed. */
export function checkUpstream(upstream: string, allowInsecure = false): URL {
  const url = URL.parse(upstream);
  if (!url) throw new Error('the upstream needs an absolute URL, such as https://gitea.example.org');
  if (!/^https?:$/.test(url.protocol)) throw new Error('the upstream needs an http: or https: URL');
  if (url.username || url.password) throw new Error('the upstream must not carry credentials: clients send their own');
  if (url.pathname !== '/' || url.search || url.hash)
    throw new Error(
      'the upstream is an origin only (such as https://gitea.example.org); /api/v1 is kept from each request',
    );
  if (url.protocol === 'http:' && !allowInsecure && !isLoopbackHost(url.hostname))
    throw new Error(
      `the upstream ${url.origin} is plain http: clients' credentials would cross the network in clear; use https, or --allow-insecure-http`,
    );
  return url;
}

/** `checkedAs`: the server profile its document is, unless a document of the user's is. */
export async function createProxy(options: ProxyOptions, front: ProxyFront, checkedAs?: ServerProfile) {
  const upstream = checkUpstream(options.upstream, options.allowInsecureUpstream);
  const checker = createChecker(front.table.checkAnswer, options, isForgejo(checkedAs));
  // In front of a real server, CORS from an allow-list only (cors.ts says why).
  const originAllowed = allowList(options.corsOrigins ?? []);
  const exchanges = createExchanges(upstream, options, checker, front.bodies);
  const { table, conditions, journal, docsUrl } = front;
  const started = new Date().toISOString();
  const sendError = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void =>
    sendJson(res, status, apiError(docsUrl(), message), headers);
  const refused = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers = {}) => {
    req.resume();
    sendError(res, status, message, headers);
    return status;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<Sent> {
    const method = req.method ?? 'GET';
    const requestOrigin = req.headers.origin;
    // Refused before anything reaches the upstream: a page of that origin gets no answer to read, and does nothing.
    if (requestOrigin !== undefined && !originAllowed(requestOrigin)) {
      const message = `the proxy answers browser pages of this machine and of --cors-origin only, not of ${JSON.stringify(requestOrigin.slice(0, 100))}`;
      return refused(req, res, 403, message);
    }
    const headers = singleValued(req.headers);
    const header: HeaderOf = (name) => headers[name];
    if (isPreflight(method, header)) {
      // The upstream may be a Forgejo: its OTP header is listed too.
      res.writeHead(204, preflightHeaders(header, true)).end();
      req.resume();
      return 204;
    }
    const cors = corsHeaders(header);
    const url = URL.parse(req.url ?? '/', 'http://proxy') ?? undefined;
    if (url?.pathname === JOURNAL_PATH) {
      const answer = journalAnswer(journal, method, headers.authorization, docsUrl());
      req.resume();
      const all = { ...cors, ...answer.headers };
      if (answer.body !== undefined) sendJson(res, answer.status, answer.body, all);
      else res.writeHead(answer.status, { ...all, 'Content-Length': '0', 'X-Content-Type-Options': 'nosniff' }).end();
      return answer.status;
    }
    const arrival = { req, res, url, headers, cors, op: undefined, sendError: sendError.bind(null, res) };
    if (url?.pathname !== BASE_PATH && !url?.pathname.startsWith(`${BASE_PATH}/`)) return exchanges.pass(arrival);
    // A request to the API, under its conditions as in the other modes: one that faults never reaches the upstream.
    const route = table.route(method === 'HEAD' ? 'GET' : method, url.pathname.slice(BASE_PATH.length) || '/');
    const op = route.kind === 'match' ? route.op : undefined;
    const signal = (): AbortSignal => {
      const left = new AbortController();
      res.once('close', () => left.abort());
      return left.signal;
    };
    const { authorization, prefer } = headers;
    const arrived = { method, url, authorization, prefer, operationId: op?.operationId, signal };
    return underConditions<Sent>({ conditions, journal }, arrived, {
      // The Prefer header is the mock's: one it cannot read is refused here, not passed on.
      answer: async (prefer) =>
        prefer.ok ? exchanges.pass({ ...arrival, op }) : refused(req, res, 400, prefer.message, cors),
      fault: (fault) => {
        req.resume();
        const { status, statusText, headers, body } = faultAnswer(fault, cors);
        res.writeHead(status, statusText, headers).end(body);
        return status;
      },
      refuse: ({ status, message }) => refused(req, res, status, message, retryShortly(cors)),
      reset: () => reset(req),
      statusOf: (sent) => (sent === 'reset' ? null : sent),
    });
  }

  function report(): ProxyReport {
    const { outside, unanswered } = exchanges.counts();
    return {
      upstream: upstream.origin,
      ...(checkedAs && {
        checkedAs: { profile: checkedAs, ...(options.upstreamServer && { server: options.upstreamServer }) },
      }),
      started,
      finished: new Date().toISOString(),
      operations: checker.stats.byName(),
      notAnswered: { exchanges: unanswered },
      notInContract: { exchanges: outside },
    };
  }

  return { handle, report, close: async () => exchanges.close() };
}
