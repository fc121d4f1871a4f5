import type { IHttpRequest } from '@stoplight/prism-http';
import { utf8Bytes } from '../common/bytes.js';
import { htmlEscaped } from '../common/go-json.js';
import { checkAuthorization, oneTimeCode } from './auth.js';
import { readBody, type BodyBudget, type BodyResult, type FormPart } from './body.js';
import { checkPreference, faultAnswer, underConditions } from './conditions.js';
import type { Conditions, Preference, PreferResult } from './conditions.js';
import { corsHeaders, isPreflight, preflightHeaders, retryShortly, type HeaderOf } from './cors.js';
import { apiError, bugMessage, failureLine, JSON_TYPE, MOCK_FAILURE, notAllowed, reasonPhrase } from './errors.js';
import { describeViolation } from '../contract/conformance.js';
import { JOURNAL_PATH, journalAnswer, type Journal } from './journal.js';
import { FORGEJO_VERSION_PATH, serverAnswers, type ServerAnswers } from './server-profile.js';
import type { MockOperation, OperationTable } from './operations.js';
import { decodedSegments, listViolations, queryOf, requestRefusal } from './validation.js';

export const BASE_PATH = '/api/v1';

export interface SourceRequest {
  op: MockOperation;
  request: IHttpRequest;
  form?: readonly FormPart[];
  url: URL;
  preference: Preference;
  /** Never logged or stored. */
  credential: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  type?: string;
  /** A failure of the mock itself: not held to the document. */
  own?: true;
}

export interface AnsweringSource {
  /** An answer that breaks the document is answered 500 instead of only warned of. */
  strict: boolean;
  answer(request: SourceRequest): Promise<Answer>;
  /** A request outside /api/v1 (the sandbox's `/__sandbox/…`), or undefined when not its own. */
  outside?(method: string, url: URL, credential: string | undefined, request: Request): Promise<Answer | undefined>;
  close?(): Promise<void>;
}

export type SourceContext = Pick<AppParts, 'docsUrl'>;

// GET /api/v1/version is a fact of the host, not an operation of the document.
const VERSION_ROUTE = { kind: 'method', allowed: ['GET'] } as const;

export interface AppParts {
  table: OperationTable;
  source: AnsweringSource;
  docsUrl(): string;
  warn(line: string): void;
  conditions: Conditions;
  journal: Journal;
  bodies: BodyBudget;
  /** srvx's on Node: cheaper, and it can carry a body on a 205. */
  Response?: ResponseClass;
}

export type ResponseClass = new (body: Uint8Array<ArrayBuffer> | null, init: ResponseInit) => Response;

export type GiteaApp = ReturnType<typeof createApp>;

type Headers = Record<string, string>;

/** As Gitea labels it: JSON without a space before the charset, text with one. */
function contentTypeFor(prismType: string | undefined): string | undefined {
  if (prismType === undefined) return undefined;
  const mediaType = (prismType.split(';')[0] ?? '').trim();
  if (mediaType.endsWith('json')) return JSON_TYPE;
  return mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType;
}

const CHECKED_ANSWERS = 256;
const CHECKED_ANSWER_CHARS = 16_384;

/** Remembered: a check costs more than the rest of its request, and the examples repeat. */
function answerCheck(table: OperationTable): (op: MockOperation, answer: Answer, json?: string) => string | undefined {
  const checked = new Map<string, string | undefined>();
  return (op, answer, json) => {
    if (answer.own || (!op.responses.has(answer.status) && (answer.status < 200 || answer.status > 299))) return;
    const contentType = contentTypeFor(answer.type);
    const body = answer.body === undefined || contentType === undefined ? '' : (json ?? String(answer.body));
    const key = `${JSON.stringify([op.operationId, answer.status, answer.type, answer.headers])}${body}`;
    const remembered = key.length <= CHECKED_ANSWER_CHARS;
    if (remembered && checked.has(key)) return checked.get(key);
    const found = table.checkAnswer(op.operationId, {
      status: answer.status,
      headers: new Headers({ ...answer.headers, ...(contentType ? { 'content-type': contentType } : {}) }),
      body,
      ...(json === undefined ? {} : { value: answer.body }),
    });
    const breaks = `${op.operationId} ${answer.status}: the answer breaks the document`;
    const message = found.length > 0 ? `${breaks}: ${listViolations(found.map(describeViolation))}` : undefined;
    if (remembered) {
      if (checked.size >= CHECKED_ANSWERS) checked.delete(checked.keys().next().value!);
      checked.set(key, message);
    }
    return message;
  };
}

type Front = AppParts & { check: ReturnType<typeof answerCheck>; Answering: ResponseClass; server: ServerAnswers };

/** Its fetch never rejects; `Response.error()` means the connection is to be reset. */
export function createApp(parts: AppParts) {
  const server = serverAnswers(parts.table.document);
  const front: Front = { ...parts, check: answerCheck(parts.table), Answering: parts.Response ?? Response, server };
  return { fetch: (request: Request) => guarded(front, request, () => handle(front, request)) };
}

/** The JSON text of an answer's body, as the server's encoder writes it: json-iterator's (`Encoder.Encode`) ends with a newline. */
const jsonText = ({ server }: Front, body: unknown): string =>
  server.jsonIterator ? `${htmlEscaped(JSON.stringify(body))}\n` : JSON.stringify(body);

/** `json`: the body as JSON text, when already written. */
function respond(front: Front, method: string, answer: Answer, cors: Headers, json?: string): Response {
  const { Answering } = front;
  const headers: Headers = { ...cors, 'X-Content-Type-Options': 'nosniff', ...answer.headers };
  const contentType = contentTypeFor(answer.type);
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  if (contentType !== undefined && answer.body !== undefined) {
    headers['Content-Type'] = contentType;
    bytes = utf8Bytes(contentType === JSON_TYPE ? (json ?? jsonText(front, answer.body)) : String(answer.body));
  }
  headers['Content-Length'] = String(bytes?.length ?? 0);
  const init = { status: answer.status, statusText: reasonPhrase(answer.status), headers };
  if (bytes === undefined || method === 'HEAD') return new Answering(null, init);
  try {
    return new Answering(bytes, init);
  } catch {
    // A Fetch Response carries no body on a 205, which Gitea's notifyReadThread sends (a socket server can).
    return new Answering(null, { ...init, headers: { ...headers, 'Content-Length': '0' } });
  }
}

function error(front: Front, method: string, status: number, message: string, headers: Headers, more?: object) {
  const body = { ...more, ...apiError(front.docsUrl(), message) };
  return respond(front, method, { status, type: 'application/json', body }, headers);
}

const noContent = ({ Answering }: Front, headers: Headers) =>
  new Answering(null, { status: 204, statusText: reasonPhrase(204), headers });

// A server's router, where the document names one; else Gitea's `APIErrorNotFound` as 1.25 to 1.27.0-dev send it.
const notFoundHere = (front: Front, method: string, cors: Headers) =>
  front.server.notFound
    ? respond(front, method, front.server.notFound, cors)
    : error(front, method, 404, 'not found', cors, { errors: null });

type Routed = { request: Request; url: URL; cors: Headers; op: MockOperation; read: () => Promise<BodyResult> };

async function answerOperation(front: Front, routed: Routed, prefer: PreferResult): Promise<Response> {
  const { request, url, cors, op } = routed;
  const { method } = request;
  const headers: Headers = Object.fromEntries(request.headers);
  const auth = checkAuthorization(
    headers.authorization,
    oneTimeCode((name) => headers[name], front.server.forgejo),
  );
  // Gitea sends no WWW-Authenticate, so browsers show no sign-in dialog for the API.
  if (!auth.ok) return error(front, method, 401, auth.message, cors);
  const problem = prefer.ok ? checkPreference(op, prefer.preference) : prefer.message;
  if (!prefer.ok || problem !== undefined) return error(front, method, 400, problem ?? 'invalid Prefer header', cors);
  const body = await routed.read();
  // A body refused while it was read is left unread: its connection goes with the answer.
  if (!body.ok) {
    const close = { ...(body.status === 503 ? retryShortly(cors) : cors), Connection: 'close' };
    return error(front, method, body.status, body.message, body.status === 413 || body.status === 503 ? close : cors);
  }
  const input: IHttpRequest = {
    method: op.method.toLowerCase() as IHttpRequest['method'],
    url: { path: url.pathname.slice(BASE_PATH.length) || '/', query: queryOf(url) },
    headers: body.contentType === undefined ? headers : { ...headers, 'content-type': body.contentType },
    body: body.body,
  };
  const refusal = requestRefusal(op, input, body.form);
  if (refusal) return error(front, method, refusal.status, refusal.message, cors);
  const answered = await front.source.answer({
    op,
    request: input,
    ...(body.form ? { form: body.form } : {}),
    url,
    preference: prefer.preference,
    credential: headers.authorization!,
  });
  // A profile's records are closed: what the sandbox's model holds besides (a field of another server) is not sent.
  const answer =
    front.server.profile && !answered.own && typeof answered.body === 'object'
      ? { ...answered, body: front.table.fitAnswer(op.operationId, answered.status, answered.body) }
      : answered;
  const json =
    answer.body === undefined || answer.own || contentTypeFor(answer.type) !== JSON_TYPE
      ? undefined
      : jsonText(front, answer.body);
  if (front.source.strict) {
    const message = front.check(op, answer, json);
    if (message === undefined) return respond(front, method, answer, cors, json);
    front.warn(message);
    return error(front, method, 500, bugMessage(message), cors);
  }
  // The examples only earn a warning, checked once the answer is on its way: the first check compiles the schemas.
  setTimeout(() => {
    const message = front.check(op, answer, json);
    if (message !== undefined) front.warn(message);
  });
  return respond(front, method, answer, cors, json);
}

async function handle(front: Front, request: Request): Promise<Response> {
  const { method: sent } = request;
  const header: HeaderOf = (name) => request.headers.get(name) ?? undefined;
  const cors = corsHeaders(header);
  if (isPreflight(sent, header)) return noContent(front, preflightHeaders(header, front.server.forgejo));
  // WHATWG URL parsing also resolves dot segments, so `/api/v1/../x` leaves the API.
  const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
  // Prism decodes every segment; a broken escape or bad UTF-8 is refused here instead.
  if (url === undefined || decodedSegments(url.pathname) === undefined)
    return error(front, sent, 400, 'the request path is not a valid URL path', cors);
  const authorization = header('authorization');
  if (url.pathname === JOURNAL_PATH)
    return respond(front, sent, journalAnswer(front.journal, sent, authorization, front.docsUrl()), cors);
  const { forgejoVersion } = front.server;
  if (forgejoVersion && url.pathname === FORGEJO_VERSION_PATH && (sent === 'GET' || sent === 'HEAD'))
    return respond(front, sent, forgejoVersion, cors);
  if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) {
    const own = await front.source.outside?.(sent, url, authorization, request);
    return own ? respond(front, sent, own, cors) : notFoundHere(front, sent, cors);
  }
  const path = url.pathname.slice(BASE_PATH.length) || '/';
  const method = sent === 'HEAD' ? 'GET' : sent;
  const route = path === '/version' ? VERSION_ROUTE : front.table.route(method, path);
  const arrival = {
    method: sent,
    url,
    authorization,
    prefer: header('prefer'),
    operationId: route.kind === 'match' ? route.op.operationId : undefined,
    signal: () => request.signal,
  };
  let bodyRead: Promise<BodyResult> | undefined;
  const reading = front.bodies.reading();
  const read = (op: MockOperation) => (bodyRead ??= readBody(request, op.operation, reading));
  return underConditions(front, arrival, {
    held: () => {
      if (route.kind === 'match') read(route.op).catch(() => {}); // a request that faults never asks for it
    },
    answer: (prefer) =>
      guarded(front, request, () => {
        if (route === VERSION_ROUTE && method === 'GET') return respond(front, sent, front.server.version, cors);
        if (route.kind === 'none') return notFoundHere(front, sent, cors);
        if (route.kind === 'method') {
          const answer = notAllowed(front.docsUrl(), method, url.pathname, [...route.allowed, 'OPTIONS']);
          if (method !== 'OPTIONS') return respond(front, method, answer, cors);
          return noContent(front, { ...cors, ...answer.headers, 'Content-Length': '0' });
        }
        return answerOperation(front, { request, url, cors, op: route.op, read: () => read(route.op) }, prefer);
      }),
    fault: (fault) => {
      const { status, statusText, headers, body } = faultAnswer(fault, cors);
      return new front.Answering(sent === 'HEAD' ? null : utf8Bytes(body), { status, statusText, headers });
    },
    refuse: ({ status, message }) => error(front, sent, status, message, retryShortly(cors)),
    reset: () => Response.error(),
    // Read by its status 0: reading the `type` of srvx's response builds a Fetch one, which refuses a 205 with a body.
    statusOf: (response) => (response.status === 0 ? null : response.status),
  }).finally(() => reading.release());
}

async function guarded(front: Front, request: Request, answer: () => Response | Promise<Response>) {
  try {
    return await answer();
  } catch (failure) {
    front.warn(failureLine(request.method, request.url, failure));
    return error(front, request.method, 500, MOCK_FAILURE, {});
  }
}
