// What stands behind the mock's front. An answering source gets a request the front has already
// routed, authenticated, checked against `Prefer` and validated against the document, and says
// what to answer; the front writes it the same way whatever the source: the examples (the
// document's, chosen as Prism chooses them: negotiation.ts) or the sandbox (a world that remembers
// writes). The proxy takes requests whole on node:http instead (proxy/proxy.ts).
import type { IHttpRequest } from '@stoplight/prism-http';
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

export interface SourceContext {
  /** The URL of the server's API documentation, for the `url` of error bodies (known once listening). */
  docsUrl(): string;
}
