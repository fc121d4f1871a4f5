// What stands behind the mock's front: an answer source gets a request the front has already
// routed, authenticated, checked against `Prefer` and validated against the document, and says
// what to answer. The front writes it, in the same way whatever the source: the examples (Prism),
// the sandbox (a world that remembers writes), and a proxy to a real server.
import type { IHttpRequest } from '@stoplight/prism-http';
import type { MockOperation } from './operations.js';
import type { Preference } from './prefer.js';

export interface SourceRequest {
  op: MockOperation;
  /** The request as Prism reads it: the path below /api/v1, the parsed query, headers and body. */
  request: IHttpRequest;
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

export interface AnswerSource {
  /** An answer that breaks the document is this source's bug: the front answers 500 instead of only warning. */
  strict: boolean;
  answer(request: SourceRequest): Promise<Answer>;
  /** Serves a request outside /api/v1 (the sandbox's `/__sandbox/…`); undefined when it is not one of its own. */
  outside?(method: string, path: string, credential: string | undefined): Promise<Answer | undefined>;
  close?(): Promise<void>;
}

export interface SourceContext {
  /** The URL of the server's API documentation, for the `url` of error bodies (known once listening). */
  docsUrl(): string;
}
