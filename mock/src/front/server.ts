// The mock server's front: it behaves like a Gitea host whatever answers behind it. It serves the
// document under /api/v1 (and the host's version at /api/v1/version), enforces credentials, checks
// `Prefer`, validates requests and answers against the document, speaks CORS, and answers every
// error in the service's own JSON dialect.
// What to answer comes from an answer source (source.ts): the examples, the sandbox, or the
// proxy to a real server, which takes requests whole.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { IHttpRequest } from '@stoplight/prism-http';
import { checkAuthorization } from './auth.js';
import { readBody } from './body.js';
import { allowList, anyOrigin, corsHeaders, isPreflight, preflightHeaders } from './cors.js';
import { DOCUMENT } from '../contract/document-path.js';
import { apiError, JSON_TYPE, notFound, rawErrorResponse, sendJson } from './errors.js';
import { createExamples } from '../sources/examples.js';
import { isBodyOptional, loadOperations, type MockOperation, type OperationTable } from './operations.js';
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

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };
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
      const element: IHttpRequest = { method: op.method.toLowerCase() as IHttpRequest['method'], url: { path: url.pathname.slice(BASE_PATH.length), query: queryOf(url) }, headers: singleValued(headers), body };
      // Without its body: no body in the operation, and no length that says there is one.
      const { body: _omitted, ...request } = op.operation.request ?? {};
      const resource = bodyRead ? op.operation : { ...op.operation, request };
      if (!bodyRead) delete element.headers!['content-length'];
      return errorsOf(prism.validator.validateInput({ resource, element })).map((d) => `${String(d.code) === '415' ? 'headers.content-type' : (d.path ?? []).join('.') || 'request'}: ${namingNull(d.message)}`);
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
    const body = await readBody(req);
    if (!body.ok) {
      const closing = body.status === 413 ? { Connection: 'close' } : {};
      sendJson(res, body.status, apiError(docsUrl, body.message), { ...cors, ...closing });
      return body.status;
    }

    const input: IHttpRequest = {
      method: op.method.toLowerCase() as IHttpRequest['method'],
      url: { path, query: queryOf(url) },
      headers,
      body: body.body,
    };
    const inputErrors = errorsOf(prism.validator.validateInput({ resource: op.operation, element: input }));
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
    let url: URL;
    try {
      url = new URL(req.url ?? '/', origin);
      // Prism decodes every segment; a broken escape or bad UTF-8 is refused here instead.
      for (const segment of url.pathname.split('/')) decodeURIComponent(segment);
    } catch {
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

  const server = createServer(
    // Slow or stuck clients cannot hold sockets for long (a proxy's uploads may take their time);
    // headers are capped at 16 KiB.
    { requestTimeout: 'passThrough' in source ? 0 : 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000, maxHeaderSize: 16 * 1024 },
    (req, res) => {
      const started = performance.now();
      handle(req, res)
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
    },
  );
  // Requests Node's parser refuses (CR/LF or bad bytes in headers, oversized headers, timeouts)
  // never reach the handler; answer them in the same dialect and close.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = status === 431 ? 'request headers are too large' : status === 408 ? 'the request took too long' : 'malformed HTTP request';
    socket.end(rawErrorResponse(status, STATUS_TEXT[status] ?? 'Bad Request', apiError(docsUrl, message)));
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

