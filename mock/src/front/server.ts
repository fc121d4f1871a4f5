// The mock server's front: it behaves like a Gitea host whatever answers behind it. It serves the
// document under /api/v1 (and the host's version at /api/v1/version), enforces credentials, checks
// `Prefer`, validates requests and answers against the document, speaks CORS, and answers every
// error in the service's own JSON dialect.
// What to answer comes from an answer source (source.ts): the examples, the sandbox, or the
// proxy to a real server, which takes requests whole.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IHttpRequest } from '@stoplight/prism-http';
import { checkAuthorization } from './auth.js';
import { formContent, mimeType, readBody, validationView } from './body.js';
import { answerAndClose, defaultMaxConnections, IDLE_TIMEOUT_MS, limitConnections } from './connections.js';
import { allowList, anyOrigin, corsHeaders, isPreflight, preflightHeaders } from './cors.js';
import { DOCUMENT } from '../contract/document-path.js';
import { apiError, JSON_TYPE, notFound, rawErrorResponse, sendJson } from './errors.js';
import { createExamples } from '../sources/examples.js';
import { isBodyOptional, loadOperations, type MockOperation, type OperationTable } from './operations.js';
import { parseForm, type FormPart } from './multipart.js';
import { loadPrism } from './prism.js';
import { checkPreference, parsePrefer } from './prefer.js';
import { createSandbox, type SandboxOptions } from '../sources/sandbox.js';
import type { ProxyOptions } from '../sources/proxy.js';
import type { Answer, AnswerSource, AnsweringSource, FrontServices } from '../sources/source.js';
import { VERSION_ANSWER, VERSION_PATH } from './version.js';

export const BASE_PATH = '/api/v1';
export const DEFAULT_DOCUMENT = DOCUMENT;

export interface MockOptions {
  /** The OpenAPI document to serve; defaults to the package's `openapi.yaml`. */
  document?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data repeatable. */
  seed?: string;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: SandboxOptions;
  /** Forward every request to a real server and check the exchanges against the document. */
  proxy?: ProxyOptions;
  /** One line per answered request; never given credentials. */
  onRequest?: (line: string) => void;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  onWarning?: (line: string) => void;
}

export interface MockServer {
  /** `http://host:port` */
  origin: string;
  /** `http://host:port/api/v1`, the base URL clients use. */
  baseUrl: string;
  operations: readonly MockOperation[];
  close(): Promise<void>;
}

type Headers = Record<string, string | string[]>;

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large', 503: 'Service Unavailable' };
const SAFE_HOST = /^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

type Diagnostic = { path?: string[]; message: string; code?: string | number; severity: number };

/** The errors among Prism's diagnostics (a Left of its validators); warnings do not count. */
function errorsOf(result: { _tag: 'Left'; left: readonly Diagnostic[] } | { _tag: 'Right' }): Diagnostic[] {
  return result._tag === 'Left' ? result.left.filter((diagnostic) => diagnostic.severity === 0) : [];
}

/** Prism lists an enum's values joined by commas and writes `null` as nothing: name it. */
function namingNull(message: string): string {
  return message.replace(/(allowed values: [^;]*?), ?(?=$|;)/, '$1, null');
}

/** Prism's diagnostics in one readable line, such as `body.permission: must be equal to one of …`. */
function describeViolations(violations: readonly { path?: string[]; message: string; code?: string | number }[]): string {
  return violations
    .map((v) => {
      // Gitea's binding words a content type it cannot read this way.
      if (String(v.code) === '415') return `[]: Unsupported Content-Type (${v.message})`;
      return v.path && v.path.length > 0 ? `${v.path.join('.')}: ${namingNull(v.message)}` : namingNull(v.message);
    })
    .join('; ');
}

function singleValued(headers: IncomingMessage['headers']): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/**
 * The path's segments percent-decoded, or undefined when one holds a broken escape or bad UTF-8,
 * which Prism's router and the sandbox would throw on. The result is used: a bundler takes a call
 * of decodeURIComponent whose result is dropped for pure, and removes it.
 */
function decodedSegments(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

/** Content type as Gitea labels it: JSON without a space before the charset, text with one. */
function contentTypeFor(prismType: string | undefined): string | undefined {
  if (prismType === undefined) return undefined;
  const mediaType = (prismType.split(';')[0] ?? '').trim();
  if (mediaType.endsWith('json')) return JSON_TYPE;
  return mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType;
}

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const prism = await loadPrism();
  const table: OperationTable = await loadOperations(prism.http, options.document ?? DEFAULT_DOCUMENT);
  const warn = options.onWarning ?? (() => {});
  let origin = '';
  let docsUrl = '';
  const context = { docsUrl: () => docsUrl };
  const examples = createExamples(prism, context, options);
  // In front of a real server, CORS from an allow-list only (cors.ts says why); checked before anything starts.
  const originAllowed = options.proxy ? allowList(options.proxy.corsOrigins ?? []) : anyOrigin;
  // The proxy's answer check (Ajv, the YAML document) is loaded only when it runs.
  const source: AnswerSource = options.proxy
    ? await (await import('../sources/proxy.js')).createProxy(options.document ?? DEFAULT_DOCUMENT, options.proxy)
    : options.sandbox
      ? await createSandbox(table, examples, context, options.sandbox)
      : examples;
  const services: FrontServices = {
    route: (method, path) => {
      const route = table.route(method, path);
      return route.kind === 'match' ? route.op : undefined;
    },
    requestViolations: (op, url, headers, body, bodyRead) => {
      // Prism's path matcher would throw on it; Gitea answers it 400, which the proxy passes on.
      if (decodedSegments(url.pathname) === undefined) return ['path: the request path is not a valid URL path'];
      const element: IHttpRequest = { method: op.method.toLowerCase() as IHttpRequest['method'], url: { path: url.pathname.slice(BASE_PATH.length), query: queryOf(url) }, headers: singleValued(headers), body };
      const problems: string[] = [];
      // What readBody refuses, the proxy reports; such a body is then left out, as one too large.
      let withBody = bodyRead;
      let form: FormPart[] | undefined;
      const type = element.headers!['content-type'];
      const mime = type === undefined ? undefined : mimeType(type);
      if (type !== undefined && !mime && body !== undefined) {
        problems.push(`headers.content-type: not a media type: ${JSON.stringify(type.slice(0, 100))}`);
        withBody = false;
      }
      const boundary = mime?.essence === 'multipart/form-data' && formContent(op.operation) ? mime.params.get('boundary') : null;
      if (withBody && boundary && typeof body === 'string') {
        const parsed = parseForm(Buffer.from(body, 'latin1'), boundary);
        if (parsed.ok) form = parsed.parts;
        else {
          problems.push(`body: failed to parse request multipart form: ${parsed.message}`);
          withBody = false;
        }
      }
      // Without its body: no body in the operation, and no length that says there is one.
      const { body: _omitted, ...request } = op.operation.request ?? {};
      const resource = withBody ? op.operation : { ...op.operation, request };
      if (!withBody) {
        delete element.headers!['content-length'];
        delete element.body;
      }
      const view = validationView(resource, element, form);
      return [...problems, ...errorsOf(prism.validator.validateInput(view)).map((d) => `${String(d.code) === '415' ? 'headers.content-type' : (d.path ?? []).join('.') || 'request'}: ${namingNull(d.message)}`)];
    },
    credentialProblem: (authorization, otp) => {
      const auth = checkAuthorization(authorization, otp);
      return auth.ok ? undefined : auth.message;
    },
    sendError: (res, status, message, headers) => sendJson(res, status, apiError(docsUrl, message), headers),
  };

  const publicUrl = (req: IncomingMessage, url: URL): URL => {
    const host = req.headers.host;
    if (host === undefined || !SAFE_HOST.test(host)) return url;
    const rebased = new URL(url.href);
    rebased.host = host;
    return rebased;
  };

  /** Writes a source's answer with the front's headers; HEAD gets the headers only. */
  function send(req: IncomingMessage, res: ServerResponse, answer: Answer, cors: Headers): number {
    const headers: Headers = { ...cors, 'X-Content-Type-Options': 'nosniff', ...answer.headers };
    const contentType = contentTypeFor(answer.type);
    let bytes: Buffer | undefined;
    if (contentType !== undefined && answer.body !== undefined) {
      headers['Content-Type'] = contentType;
      bytes = Buffer.from(contentType === JSON_TYPE ? JSON.stringify(answer.body) : String(answer.body));
    }
    headers['Content-Length'] = String(bytes?.length ?? 0);
    res.writeHead(answer.status, headers);
    res.end(req.method === 'HEAD' ? undefined : bytes);
    return answer.status;
  }

  /** 405 with `Allow`; an OPTIONS request is told what is allowed with a 204. */
  function notAllowed(res: ServerResponse, method: string, pathname: string, allowed: readonly string[], cors: Headers): number {
    const allow = [...allowed, 'OPTIONS'].join(', ');
    if (method === 'OPTIONS') {
      res.writeHead(204, { ...cors, Allow: allow, 'Content-Length': '0' });
      res.end();
      return 204;
    }
    sendJson(res, 405, apiError(docsUrl, `${method} is not allowed on ${pathname}; allowed: ${allow}`), { ...cors, Allow: allow });
    return 405;
  }

  async function answerOperation(source: AnsweringSource, req: IncomingMessage, res: ServerResponse, op: MockOperation, url: URL, path: string, cors: Headers): Promise<number> {
    const headers = singleValued(req.headers);
    const auth = checkAuthorization(headers.authorization, headers['x-gitea-otp']);
    if (!auth.ok) {
      // Gitea sends no WWW-Authenticate, so browsers show no sign-in dialog for the API.
      sendJson(res, 401, apiError(docsUrl, auth.message), cors);
      return 401;
    }
    const prefer = parsePrefer(headers.prefer);
    const problem = prefer.ok ? checkPreference(op, prefer.preference) : prefer.message;
    if (!prefer.ok || problem !== undefined) {
      sendJson(res, 400, apiError(docsUrl, problem ?? 'invalid Prefer header'), cors);
      return 400;
    }
    const body = await readBody(req, op.operation);
    if (!body.ok) {
      const closing = body.status === 413 ? { Connection: 'close' } : {};
      sendJson(res, body.status, apiError(docsUrl, body.message), { ...cors, ...closing });
      return body.status;
    }

    const input: IHttpRequest = {
      method: op.method.toLowerCase() as IHttpRequest['method'],
      url: { path, query: queryOf(url) },
      // A multipart body comes re-framed under a boundary of its own.
      headers: body.contentType === undefined ? headers : { ...headers, 'content-type': body.contentType },
      body: body.body,
    };
    const inputErrors = errorsOf(prism.validator.validateInput(validationView(op.operation, input, body.form)));
    if (inputErrors.length > 0) {
      sendJson(res, 422, apiError(docsUrl, describeViolations(inputErrors)), cors);
      return 422;
    }
    const answer = await source.answer({ op, request: input, url: publicUrl(req, url), preference: prefer.preference, credential: headers.authorization! });
    /** Why the answer breaks the document, or undefined. */
    // Gitea sends some statuses without a body at all (`x-body-optional`), which Prism cannot be told.
    const declaresBody = (op.operation.responses.find((response) => response.code === String(answer.status))?.contents?.length ?? 0) > 0;
    const bodyless = answer.body === undefined && !answer.own && declaresBody && (await isBodyOptional(options.document ?? DEFAULT_DOCUMENT, op.operationId, answer.status));
    const violation = (): string | undefined => {
      if (answer.own || bodyless) return undefined;
      const contentType = contentTypeFor(answer.type);
      const output = { statusCode: answer.status, headers: { ...answer.headers, ...(contentType ? { 'content-type': contentType } : {}) }, body: answer.body };
      const outputErrors = errorsOf(prism.validator.validateOutput({ resource: op.operation, element: output }));
      return outputErrors.length > 0 ? `${op.operationId} ${answer.status}: the answer breaks the document: ${describeViolations(outputErrors)}` : undefined;
    };
    // A source that makes its answers up (the sandbox) must never break the document: checked
    // before sending, and answered with a 500 if it does.
    if (source.strict) {
      const message = violation();
      if (message === undefined) return send(req, res, answer, cors);
      warn(message);
      return send(req, res, { status: 500, type: 'application/json', body: apiError(docsUrl, `${message}; this is a bug in gitea-mock`) }, cors);
    }
    // The examples only earn a warning, so the check waits until the answer is on its way: the
    // first check of an operation compiles its schemas, a sixth of a second that the client would
    // otherwise wait for its first answer.
    const status = send(req, res, answer, cors);
    setImmediate(() => {
      const message = violation();
      if (message !== undefined) warn(message);
    });
    return status;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    // Node's own refusal (requireHostHeader) is an empty 400; Go's net/http refuses it too.
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      req.resume();
      sendJson(res, 400, apiError(docsUrl, 'missing required Host header'), { Connection: 'close' });
      return 400;
    }
    const requestOrigin = req.headers.origin;
    if (requestOrigin !== undefined && !originAllowed(requestOrigin)) {
      // Refused before anything reaches the upstream: a page of that origin gets no answer to read, and does nothing.
      req.resume();
      sendJson(res, 403, apiError(docsUrl, `the proxy answers browser pages of this machine and of --cors-origin only, not of ${JSON.stringify(requestOrigin.slice(0, 100))}`));
      return 403;
    }
    const cors = corsHeaders(req);
    if (isPreflight(req)) {
      res.writeHead(204, preflightHeaders(req));
      res.end();
      req.resume();
      return 204;
    }
    if ('passThrough' in source) return source.passThrough(req, res, cors, services);
    // WHATWG URL parsing also resolves dot segments, so `/api/v1/../x` leaves the API.
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '/', origin);
    } catch {
      // Refused below.
    }
    // Prism decodes every segment; a broken escape or bad UTF-8 is refused here instead.
    if (url === undefined || decodedSegments(url.pathname) === undefined) {
      sendJson(res, 400, apiError(docsUrl, 'the request path is not a valid URL path'), cors);
      return 400;
    }
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) {
      req.resume();
      const own = await source.outside?.(req.method ?? 'GET', url.pathname, req.headers.authorization);
      if (own) return send(req, res, own, cors);
      sendJson(res, 404, notFound(docsUrl), cors);
      return 404;
    }
    const path = url.pathname.slice(BASE_PATH.length) || '/';
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    // The host's version, for every answering source alike (version.ts says why it is here).
    if (path === VERSION_PATH) {
      req.resume();
      return method === 'GET' ? send(req, res, VERSION_ANSWER, cors) : notAllowed(res, method, url.pathname, ['GET'], cors);
    }
    const route = table.route(method, path);
    if (route.kind === 'none') {
      sendJson(res, 404, notFound(docsUrl), cors);
      return 404;
    }
    if (route.kind === 'method') return notAllowed(res, method, url.pathname, route.allowed, cors);
    return answerOperation(source, req, res, route.op, url, path, cors);
  }

  /** Answers with `answer`, turning a failure into a 500, and logs the line. */
  function respond(req: IncomingMessage, res: ServerResponse, answer: (req: IncomingMessage, res: ServerResponse) => Promise<number>): void {
    if (connections.refused(req.socket)) return;
    const started = performance.now();
    answer(req, res)
      .catch((error: unknown) => {
        warn(`mock failure on ${req.method} ${req.url?.split('?')[0]}: ${error instanceof Error ? error.stack : String(error)}`);
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
        options.onRequest?.(`${req.method} ${req.url?.split('?')[0]} ${status} ${Math.round(performance.now() - started)}ms`);
      });
  }

  const server = createServer(
    {
      // Slow or stuck clients cannot hold sockets for long (a proxy's uploads may take their time):
      // a connection that sends no request head within IDLE_TIMEOUT_MS, or stays idle as long
      // between requests, is closed, checked every second (Node's default is every 30 s).
      requestTimeout: 'passThrough' in source ? 0 : 30_000,
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
  const connections = limitConnections(server, defaultMaxConnections(), () =>
    rawErrorResponse(503, STATUS_TEXT[503]!, apiError(docsUrl, 'too many connections are busy; try again shortly')),
  );
  // Node answers any Expect but 100-continue with an empty 417; Go's net/http refuses it too.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    respond(req, res, async () => {
      req.resume();
      sendJson(res, 417, apiError(docsUrl, `Expect: ${String(req.headers.expect).slice(0, 100)} cannot be met; only 100-continue is supported`), { Connection: 'close' });
      return 417;
    }),
  );
  // Without a listener Node closes a CONNECT's connection without a word. No tunnels here.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerAndClose(socket, rawErrorResponse(405, STATUS_TEXT[405]!, apiError(docsUrl, 'CONNECT is not allowed: this server opens no tunnels')));
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
    const message = status === 431 ? 'request headers are too large' : status === 408 ? 'the request took too long' : 'malformed HTTP request';
    answerAndClose(socket, rawErrorResponse(status, STATUS_TEXT[status] ?? 'Bad Request', apiError(docsUrl, message)));
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
      }).then(() => source.close?.()),
  };
}

