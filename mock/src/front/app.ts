// The Fetch front, under the node:http server and the MSW handlers alike: a Gitea host whatever source answers behind it.
import type { IHttpRequest } from '@stoplight/prism-http';
import { utf8Bytes } from '../common/bytes.js';
import { checkAuthorization } from './auth.js';
import { readBody, type BodyBudget, type BodyResult, type FormPart } from './body.js';
import { checkPreference, faultAnswer, underConditions } from './conditions.js';
import type { Conditions, Preference, PreferResult } from './conditions.js';
import { corsHeaders, isPreflight, preflightHeaders, retryShortly, type HeaderOf } from './cors.js';
import { apiError, bugMessage, failureLine, JSON_TYPE, MOCK_FAILURE, notAllowed, reasonPhrase } from './errors.js';
import { describeViolation } from '../contract/conformance.js';
import { JOURNAL_PATH, journalAnswer, type Journal } from './journal.js';
import type { MockOperation, OperationTable } from './operations.js';
import { decodedSegments, listViolations, queryOf, requestRefusal } from './validation.js';

export const BASE_PATH = '/api/v1';

/** A request the front has routed, authenticated, checked against `Prefer` and validated, for the source to answer. */
export interface SourceRequest {
  op: MockOperation;
  /** As Prism reads it: the path below /api/v1, the parsed query, headers and body. */
  request: IHttpRequest;
  /** A multipart/form-data body as its parts, in place of `request.body`. */
  form?: readonly FormPart[];
  /** The URL as the client addressed it (its host), for links in answers. */
  url: URL;
  preference: Preference;
  /** The `Authorization` header: whose world the sandbox answers from. Never logged or stored. */
  credential: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** JSON for a JSON media type, a string for a text one; undefined for no body. */
  body?: unknown;
  type?: string;
  /** A failure of the mock itself (a state file that cannot be written): not held to the document. */
  own?: true;
}

/** What stands behind the front: the examples or the sandbox (the proxy takes requests whole on node:http instead). */
export interface AnsweringSource {
  /** An answer that breaks the document is this source's bug: the front answers 500 instead of only warning. */
  strict: boolean;
  answer(request: SourceRequest): Promise<Answer>;
  /** A request outside /api/v1 (the sandbox's `/__sandbox/…`), or undefined when not its own; `request.signal` ends with the client. */
  outside?(method: string, url: URL, credential: string | undefined, request: Request): Promise<Answer | undefined>;
  close?(): Promise<void>;
}

export type SourceContext = Pick<AppParts, 'docsUrl'>;

// GET /api/v1/version is a fact of the host, not an operation of the document: answered here for every source alike;
// the proxy takes its requests whole before this, so the upstream answers it there.
const VERSION_PATH = '/version';
/** The Gitea release the document describes (`info.version` of openapi.yaml), marked as this mock. */
export const MOCK_VERSION = '1.27.0+gitea-contract-mock';
const VERSION_ANSWER: Answer = { status: 200, type: 'application/json', body: { version: MOCK_VERSION } };

export interface AppParts {
  table: OperationTable;
  source: AnsweringSource;
  docsUrl(): string;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  warn(line: string): void;
  conditions: Conditions;
  journal: Journal;
  bodies: BodyBudget;
  /** The Node adapter gives srvx's, which is cheaper and can carry a body on a 205 (Gitea's notifyReadThread sends one). */
  Response?: ResponseClass;
}

export type ResponseClass = new (body: Uint8Array<ArrayBuffer> | null, init: ResponseInit) => Response;

export interface GiteaApp {
  /** Never rejects (a failure of the mock is a 500 in the dialect); `Response.error()` means the connection is to be reset. */
  fetch(request: Request): Promise<Response>;
}

type Headers = Record<string, string>;

/** Content type as Gitea labels it: JSON without a space before the charset, text with one. */
function contentTypeFor(prismType: string | undefined): string | undefined {
  if (prismType === undefined) return undefined;
  const mediaType = (prismType.split(';')[0] ?? '').trim();
  if (mediaType.endsWith('json')) return JSON_TYPE;
  return mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType;
}

/** Answers whose check is remembered, and the size of the largest: the examples repeat, and so do the sandbox's reads. */
const CHECKED_ANSWERS = 256;
const CHECKED_ANSWER_CHARS = 16_384;

/** Why an answer breaks the document, remembered: a check costs more than the rest of its request, and depends on nothing else. */
function answerCheck(table: OperationTable): (op: MockOperation, answer: Answer, json?: string) => string | undefined {
  const checked = new Map<string, string | undefined>();
  return (op, answer, json) => {
    // The mock's own answers are not the API's; an error status the document does not declare is not held to it.
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
    const message =
      found.length > 0
        ? `${op.operationId} ${answer.status}: the answer breaks the document: ${listViolations(found.map(describeViolation))}`
        : undefined;
    if (remembered) {
      if (checked.size >= CHECKED_ANSWERS) checked.delete(checked.keys().next().value!);
      checked.set(key, message);
    }
    return message;
  };
}

export function createApp(parts: AppParts): GiteaApp {
  const { table, source, docsUrl, warn, conditions, journal, bodies, Response: Answering = Response } = parts;
  const check = answerCheck(table);

  /** Writes an answer with the front's headers, as Gitea writes them; HEAD gets the headers only. `json` is the body as JSON text, when already written. */
  function respond(method: string, answer: Answer, cors: Headers, json?: string): Response {
    const headers: Headers = { ...cors, 'X-Content-Type-Options': 'nosniff', ...answer.headers };
    const contentType = contentTypeFor(answer.type);
    let bytes: Uint8Array<ArrayBuffer> | undefined;
    if (contentType !== undefined && answer.body !== undefined) {
      headers['Content-Type'] = contentType;
      bytes = utf8Bytes(contentType === JSON_TYPE ? (json ?? JSON.stringify(answer.body)) : String(answer.body));
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
  const error = (method: string, status: number, message: string, headers: Headers, more?: object): Response =>
    respond(method, { status, type: 'application/json', body: { ...more, ...apiError(docsUrl(), message) } }, headers);
  const noContent = (headers: Headers) => new Answering(null, { status: 204, statusText: reasonPhrase(204), headers });
  /** 405 with `Allow`; an OPTIONS request is told what is allowed with a 204. */
  function notAllowedHere(method: string, pathname: string, allowed: readonly string[], cors: Headers): Response {
    const answer = notAllowed(docsUrl(), method, pathname, [...allowed, 'OPTIONS']);
    if (method !== 'OPTIONS') return respond(method, answer, cors);
    return noContent({ ...cors, ...answer.headers, 'Content-Length': '0' });
  }
  // Gitea's `APIErrorNotFound` as 1.25 to 1.27.0-dev send it.
  const notFoundHere = (method: string, cors: Headers) => error(method, 404, 'not found', cors, { errors: null });

  async function answerOperation(
    request: Request,
    op: MockOperation,
    url: URL,
    prefer: PreferResult,
    cors: Headers,
    read: () => Promise<BodyResult>,
  ): Promise<Response> {
    const { method } = request;
    const headers: Headers = Object.fromEntries(request.headers);
    const auth = checkAuthorization(headers.authorization, headers['x-gitea-otp']);
    // Gitea sends no WWW-Authenticate, so browsers show no sign-in dialog for the API.
    if (!auth.ok) return error(method, 401, auth.message, cors);
    const problem = prefer.ok ? checkPreference(op, prefer.preference) : prefer.message;
    if (!prefer.ok || problem !== undefined) return error(method, 400, problem ?? 'invalid Prefer header', cors);
    const body = await read();
    // A body refused while it was read is left unread: its connection goes with the answer.
    if (!body.ok) {
      const close = { ...(body.status === 503 ? retryShortly(cors) : cors), Connection: 'close' };
      return error(method, body.status, body.message, body.status === 413 || body.status === 503 ? close : cors);
    }
    const input: IHttpRequest = {
      method: op.method.toLowerCase() as IHttpRequest['method'],
      url: { path: url.pathname.slice(BASE_PATH.length) || '/', query: queryOf(url) },
      // An untyped upload is read as bytes.
      headers: body.contentType === undefined ? headers : { ...headers, 'content-type': body.contentType },
      body: body.body,
    };
    const refusal = requestRefusal(op, input, body.form);
    if (refusal) return error(method, refusal.status, refusal.message, cors);
    const answer = await source.answer({
      op,
      request: input,
      ...(body.form ? { form: body.form } : {}),
      url,
      preference: prefer.preference,
      credential: headers.authorization!,
    });
    const json =
      answer.body === undefined || answer.own || contentTypeFor(answer.type) !== JSON_TYPE
        ? undefined
        : JSON.stringify(answer.body);
    // A source that makes its answers up (the sandbox) must never break the document: checked before sending.
    if (source.strict) {
      const message = check(op, answer, json);
      if (message === undefined) return respond(method, answer, cors, json);
      warn(message);
      return error(method, 500, bugMessage(message), cors);
    }
    // The examples only earn a warning, checked once the answer is on its way: the first check compiles the schemas.
    setTimeout(() => {
      const message = check(op, answer, json);
      if (message !== undefined) warn(message);
    });
    return respond(method, answer, cors, json);
  }

  async function handle(request: Request): Promise<Response> {
    const { method: sent } = request;
    const header: HeaderOf = (name) => request.headers.get(name) ?? undefined;
    const cors = corsHeaders(header);
    if (isPreflight(sent, header)) return noContent(preflightHeaders(header));
    // WHATWG URL parsing also resolves dot segments, so `/api/v1/../x` leaves the API.
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
    // Prism decodes every segment; a broken escape or bad UTF-8 is refused here instead.
    if (url === undefined || decodedSegments(url.pathname) === undefined)
      return error(sent, 400, 'the request path is not a valid URL path', cors);
    const authorization = header('authorization');
    if (url.pathname === JOURNAL_PATH)
      return respond(sent, journalAnswer(journal, sent, authorization, docsUrl()), cors);
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) {
      const own = await source.outside?.(sent, url, authorization, request);
      return own ? respond(sent, own, cors) : notFoundHere(sent, cors);
    }
    const path = url.pathname.slice(BASE_PATH.length) || '/';
    const method = sent === 'HEAD' ? 'GET' : sent;
    const route = path === VERSION_PATH ? undefined : table.route(method, path);
    const operationId = route?.kind === 'match' ? route.op.operationId : undefined;
    const arrival = {
      method: sent,
      url,
      authorization,
      prefer: header('prefer'),
      operationId,
      signal: () => request.signal,
    };
    let bodyRead: Promise<BodyResult> | undefined;
    // What the body holds is given back when the request is answered, however it ends.
    const reading = bodies.reading();
    return underConditions({ conditions, journal }, arrival, {
      held: () => {
        if (route?.kind !== 'match') return;
        bodyRead = readBody(request, route.op.operation, reading);
        // A request that faults never asks for it.
        bodyRead.catch(() => {});
      },
      answer: (prefer) =>
        guarded(request, () => {
          if (route === undefined)
            return method === 'GET'
              ? respond(sent, VERSION_ANSWER, cors)
              : notAllowedHere(method, url.pathname, ['GET'], cors);
          if (route.kind === 'none') return notFoundHere(sent, cors);
          if (route.kind === 'method') return notAllowedHere(method, url.pathname, route.allowed, cors);
          const body = () => bodyRead ?? readBody(request, route.op.operation, reading);
          return answerOperation(request, route.op, url, prefer, cors, body);
        }),
      fault: (fault) => {
        const { status, statusText, headers, body } = faultAnswer(fault, cors);
        return new Answering(sent === 'HEAD' ? null : utf8Bytes(body), { status, statusText, headers });
      },
      refuse: ({ status, message }) => error(sent, status, message, retryShortly(cors)),
      reset: () => Response.error(),
      // Read by its status 0: reading the `type` of srvx's response builds a Fetch one, which refuses a 205 with a body.
      statusOf: (response) => (response.status === 0 ? null : response.status),
    }).finally(() => reading.release());
  }

  async function guarded(request: Request, answer: () => Response | Promise<Response>): Promise<Response> {
    try {
      return await answer();
    } catch (failure) {
      warn(failureLine(request.method, request.url, failure));
      return error(request.method, 500, MOCK_FAILURE, {});
    }
  }

  return { fetch: (request) => guarded(request, () => handle(request)) };
}
