// What stands behind the front: an answering source (the examples, the sandbox) gets a request
// routed, authenticated and checked, and says what to answer; a pass-through source (the proxy)
// takes the request whole, lent the router, the request check and the dialect.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { IHttpRequest } from '@stoplight/prism-http';
import type { BodyBudget } from './body.js';
import type { FormPart } from './multipart.js';
import type { MockOperation } from './operations.js';
import type { Preference } from './prefer.js';

export interface SourceRequest {
  op: MockOperation;
  /** The request as Prism reads it: the path below /api/v1, the parsed query, headers and body. */
  request: IHttpRequest;
  /** A multipart/form-data body, as its parts (as Go's reader reads them), in place of `request.body`. */
  form?: readonly FormPart[];
  /** The request's URL as the client addressed it (its host), for links and URLs in answers. */
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
  /** The media type of `body`, without parameters. */
  type?: string;
  /** A failure of the mock itself (a state file that cannot be written), not an answer of the API: not held to the document. */
  own?: true;
}

export interface AnsweringSource {
  /** An answer that breaks the document is this source's bug: the front answers 500 instead of only warning. */
  strict: boolean;
  answer(request: SourceRequest): Promise<Answer>;
  /**
   * Serves a request outside /api/v1 (the sandbox's `/__sandbox/…`); undefined when it is not one
   * of its own. `request` gives its body, and its signal, which ends with it (a client gone), for an answer that waits.
   */
  outside?(method: string, url: URL, credential: string | undefined, request: Request): Promise<Answer | undefined>;
  close?(): Promise<void>;
}

/** What the front lends a pass-through source. */
export interface FrontServices {
  /** The operation of the document for a method and a path below /api/v1, if there is one. */
  route(method: string, path: string): MockOperation | undefined;
  /**
   * The ways a request to `url` (below /api/v1) breaks the document, as the mock finds them, each
   * as `location: message`; a body of `undefined` with `bodyRead: false` is one too large to read whole, left out.
   */
  requestViolations(
    op: MockOperation,
    url: URL,
    headers: IncomingHttpHeaders,
    body: unknown,
    bodyRead: boolean,
  ): string[];
  /** Why Gitea would refuse these credentials (`token is required` …), or undefined. */
  credentialProblem(authorization: string | undefined, otp: string | undefined): string | undefined;
  /** Sends an error in the service's dialect: `{message, url}` as JSON. */
  sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string>): void;
  /** The bytes of request bodies held at once, which the front's readers take theirs from too (body-budget.ts). */
  bodies: BodyBudget;
}

export interface PassThroughSource {
  /** Answers `req` itself, adding `cors` to its answer; resolves with the status sent, for the log line. */
  passThrough(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    front: FrontServices,
  ): Promise<number>;
  /** What the exchanges came to so far, for the command to write (`--report`). */
  report(): ProxyReport;
  close?(): Promise<void>;
}

/** The proxy's report: the exchanges checked per operation, and those it could not check. */
export interface ProxyReport {
  upstream: string;
  started: string;
  finished: string;
  /** By operationId: exchanges, those with violations, violations by kind, each distinct one (redacted) with its count. */
  operations: Record<
    string,
    { exchanges: number; withViolations: number; violations: Record<string, number>; messages: Record<string, number> }
  >;
  notAnswered: { exchanges: number };
  notInContract: { exchanges: number };
}

export interface SourceContext {
  /** The URL of the server's API documentation, for the `url` of error bodies (known once listening). */
  docsUrl(): string;
}
