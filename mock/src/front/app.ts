// The front over the Fetch API, under the node:http server and the MSW handlers alike: a Gitea host
// whatever answers behind it: /api/v1 and its version, credentials, `Prefer`, requests and answers
// checked against the document, CORS, the error dialect, conditions and the journal.
import type { IHttpRequest } from '@stoplight/prism-http';
import { checkAuthorization } from './auth.js';
import { readBody, type BodyBudget, type BodyResult } from './body.js';
import type { Conditions } from './conditions.js';
import { corsHeaders, isPreflight, preflightHeaders, retryShortly, type HeaderOf } from './cors.js';
import {
  apiError,
  bugMessage,
  failureLine,
  JSON_TYPE,
  MOCK_FAILURE,
  notAllowed,
  notFound,
  reasonPhrase,
} from './errors.js';
import { describeViolation } from '../contract/conformance.js';
import { faultAnswer } from './faults.js';
import { JOURNAL_PATH, journalAnswer, type Journal } from './journal.js';
import { nameRefusal } from './name-rules.js';
import type { MockOperation, OperationTable } from './operations.js';
import { checkPreference, type PreferResult } from './prefer.js';
import type { Answer, AnsweringSource } from './answer-source.js';
import {
  contentTypeFor,
  decodedSegments,
  describeViolations,
  listViolations,
  queryOf,
  requestErrors,
  type PrismMethod,
} from './validation.js';
import { VERSION_ANSWER, VERSION_PATH } from './version.js';
import { underConditions } from './under-conditions.js';

export const BASE_PATH = '/api/v1';

export interface AppParts {
  table: OperationTable;
  source: AnsweringSource;
  /** The URL of the server's API documentation, for the `url` of error bodies. */
  docsUrl(): string;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  warn(line: string): void;
  /** The delays and faults requests are answered under. */
  conditions: Conditions;
  /** Where each API request is recorded once answered. */
  journal: Journal;
  /** The bytes of request bodies held at once (body.ts), shared with every reader of the server. */
  bodies: BodyBudget;
  /**
   * The Response class to answer with (default: the global one). The Node adapter gives srvx's,
   * which is cheaper and can carry a body on a 205, as Gitea's notifyReadThread sends one.
   */
  Response?: ResponseClass;
}

/** What the front needs of a Response class. */
export type ResponseClass = new (body: Uint8Array<ArrayBuffer> | null, init: ResponseInit) => Response;

export interface GiteaApp {
  /**
   * Answers one request as a Gitea host would; never rejects (a failure of the mock is a 500 in
   * the dialect). A network error (`Response.error()`) means the connection is to be reset.
   */
  fetch(request: Request): Promise<Response>;
}

type Headers = Record<string, string>;

/** The request's headers as one value each, as Prism reads them. */
function headerRecord(request: Request): Headers {
  const result: Headers = {};
  request.headers.forEach((value, name) => {
    result[name] = value;
  });
  return result;
}

/** Answers whose check is remembered, and the size of the largest one: the examples repeat, and so do the sandbox's reads of a world that did not change. */
const CHECKED_ANSWERS = 256;
const CHECKED_ANSWER_CHARS = 16_384;

/** Writes answers as Responses with the front's headers, as Gitea writes them; HEAD gets the headers only. */
function writer(Answering: ResponseClass, docsUrl: () => string) {
  /** `json` is the body as JSON text, when already written. */
  function respond(method: string, answer: Answer, cors: Headers, json?: string): Response {
    const headers: Headers = { ...cors, 'X-Content-Type-Options': 'nosniff', ...answer.headers };
    const contentType = contentTypeFor(answer.type);
    let bytes: Uint8Array<ArrayBuffer> | undefined;
    if (contentType !== undefined && answer.body !== undefined) {
      headers['Content-Type'] = contentType;
      bytes = new TextEncoder().encode(
        contentType === JSON_TYPE ? (json ?? JSON.stringify(answer.body)) : String(answer.body),
      );
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
  /** An error in the service's dialect: `{message, url}` as JSON, compact, as Gitea's Go JSON writes it. */
  const error = (method: string, status: number, message: string, headers: Headers): Response =>
    respond(method, { status, type: 'application/json', body: apiError(docsUrl(), message) }, headers);
  /** 405 with `Allow`; an OPTIONS request is told what is allowed with a 204. */
  function notAllowedHere(method: string, pathname: string, allowed: readonly string[], cors: Headers): Response {
    const answer = notAllowed(docsUrl(), method, pathname, [...allowed, 'OPTIONS']);
    if (method !== 'OPTIONS') return respond(method, answer, cors);
    const headers = { ...cors, ...answer.headers, 'Content-Length': '0' };
    return new Answering(null, { status: 204, statusText: reasonPhrase(204), headers });
  }
  return { respond, error, notAllowedHere, Answering };
}
type Writer = ReturnType<typeof writer>;

/**
 * The check of answers against the document (contract/conformance.ts), remembered by the answer:
 * the examples send the same few again and again, the sandbox the same world's, and a check costs
 * more than the rest of its request. It is a function of the operation and the answer alone, so a
 * remembered result is exact. Why the answer breaks the document, or undefined.
 */
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

interface Operating {
  source: AnsweringSource;
  warn(line: string): void;
  write: Writer;
  check: ReturnType<typeof answerCheck>;
}

/** An operation's request, routed: credentials, `Prefer`, the body, the request check, then the source's answer, checked. */
async function answerOperation(
  { source, warn, write, check }: Operating,
  request: Request,
  op: MockOperation,
  url: URL,
  prefer: PreferResult,
  cors: Headers,
  read: () => Promise<BodyResult>,
): Promise<Response> {
  const { method } = request;
  const { error, respond } = write;
  const headers = headerRecord(request);
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
    method: op.method.toLowerCase() as PrismMethod,
    url: { path: url.pathname.slice(BASE_PATH.length) || '/', query: queryOf(url) },
    // An untyped upload is read as bytes.
    headers: body.contentType === undefined ? headers : { ...headers, 'content-type': body.contentType },
    body: body.body,
  };
  const inputErrors = requestErrors(op.operation, input, body.form);
  if (inputErrors.length > 0) {
    const refusal = nameRefusal(op, input, inputErrors) ?? { status: 422, message: describeViolations(inputErrors) };
    return error(method, refusal.status, refusal.message, cors);
  }
  const answer = await source.answer({
    op,
    request: input,
    ...(body.form ? { form: body.form } : {}),
    url,
    preference: prefer.preference,
    credential: headers.authorization!,
  });
  /** The body as JSON text, written once for the check's memory and the answer. */
  const json =
    answer.body === undefined || answer.own || contentTypeFor(answer.type) !== JSON_TYPE
      ? undefined
      : JSON.stringify(answer.body);
  // A source that makes its answers up (the sandbox) must never break the document: checked
  // before sending, and answered with the one 500 if it does.
  if (source.strict) {
    const message = check(op, answer, json);
    if (message === undefined) return respond(method, answer, cors, json);
    warn(message);
    return error(method, 500, bugMessage(message), cors);
  }
  // The examples only earn a warning, so the check waits until the answer is on its way: the
  // first check compiles the document's schemas, which the client would otherwise wait for.
  setTimeout(() => {
    const message = check(op, answer, json);
    if (message !== undefined) warn(message);
  });
  return respond(method, answer, cors, json);
}

export function createApp({
  table,
  source,
  docsUrl,
  warn,
  conditions,
  journal,
  bodies,
  Response: Answering = Response,
}: AppParts): GiteaApp {
  const write = writer(Answering, docsUrl);
  const { respond, error, notAllowedHere } = write;
  const operating: Operating = { source, warn, write, check: answerCheck(table) };

  async function handle(request: Request): Promise<Response> {
    const header: HeaderOf = (name) => request.headers.get(name) ?? undefined;
    const cors = corsHeaders(header);
    if (isPreflight(request.method, header))
      return new Answering(null, { status: 204, statusText: reasonPhrase(204), headers: preflightHeaders(header) });
    // WHATWG URL parsing also resolves dot segments, so `/api/v1/../x` leaves the API.
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
    // Prism decodes every segment; a broken escape or bad UTF-8 is refused here instead.
    if (url === undefined || decodedSegments(url.pathname) === undefined)
      return error(request.method, 400, 'the request path is not a valid URL path', cors);
    if (url.pathname === JOURNAL_PATH)
      return respond(request.method, journalAnswer(journal, request.method, header('authorization'), docsUrl()), cors);
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) {
      const own = await source.outside?.(request.method, url, header('authorization'), request);
      if (own) return respond(request.method, own, cors);
      return respond(request.method, { status: 404, type: 'application/json', body: notFound(docsUrl()) }, cors);
    }
    const path = url.pathname.slice(BASE_PATH.length) || '/';
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const route = path === VERSION_PATH ? undefined : table.route(method, path);
    const arrival = {
      method: request.method,
      url,
      authorization: header('authorization'),
      prefer: header('prefer'),
      operationId: route?.kind === 'match' ? route.op.operationId : undefined,
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
          // The host's version, for every answering source alike (version.ts says why it is here).
          if (route === undefined)
            return method === 'GET'
              ? respond(request.method, VERSION_ANSWER, cors)
              : notAllowedHere(method, url.pathname, ['GET'], cors);
          if (route.kind === 'none')
            return respond(request.method, { status: 404, type: 'application/json', body: notFound(docsUrl()) }, cors);
          if (route.kind === 'method') return notAllowedHere(method, url.pathname, route.allowed, cors);
          const body = () => bodyRead ?? readBody(request, route.op.operation, reading);
          return answerOperation(operating, request, route.op, url, prefer, cors, body);
        }),
      fault: (fault) => {
        const { status, statusText, headers, body } = faultAnswer(fault, cors);
        const bytes = new TextEncoder().encode(body);
        const init = { status, statusText, headers: { ...headers, 'Content-Length': String(bytes.length) } };
        return new Answering(request.method === 'HEAD' ? null : bytes, init);
      },
      refuse: ({ status, message }) => error(request.method, status, message, retryShortly(cors)),
      reset: () => Response.error(),
      // `Response.error()`, read by its status 0: reading the `type` of srvx's response builds a Fetch one, which refuses a 205 with a body.
      statusOf: (response) => (response.status === 0 ? null : response.status),
    }).finally(() => reading.release());
  }

  /** `answer`'s response, or a 500 in the dialect when the mock fails. */
  async function guarded(request: Request, answer: () => Response | Promise<Response>): Promise<Response> {
    try {
      return await answer();
    } catch (failure) {
      warn(failureLine(request.method, request.url, failure));
      return error(request.method, 500, MOCK_FAILURE, {});
    }
  }

  return {
    fetch: (request) => guarded(request, () => handle(request)),
  };
}
