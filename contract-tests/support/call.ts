// The one request helper of the suites: node:http, not fetch, because fetch drops the body of a
// 205 (which notifyReadThread really sends) and sends a DELETE body chunked (which Prism cannot
// read). Raw bytes that HTTP itself would refuse go through support/http.ts's exchangeRaw.
// The modules' objects, read at each call: MSW's interceptor replaces their `request`.
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

export interface CallOptions {
  /** The credential `token <token>`; none when absent. */
  token?: string | undefined;
  /** More request headers, after the token's (an `authorization` here replaces it). */
  headers?: Record<string, string> | undefined;
  /** A JSON body, sent with `content-type: application/json`. */
  json?: unknown;
  /** A raw body, sent as it is (a string as UTF-8). */
  body?: string | Buffer | undefined;
  /** Ends the request: `call` then rejects. */
  signal?: AbortSignal | undefined;
}

/** An answer: its status, headers (names in lower case, as node:http gives them) and body text. */
export class Reply {
  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly body: string,
  ) {}

  /** The body parsed when the answer is JSON, else its text. Whatever it holds: each suite reads what it expects. */
  get json(): any {
    const json = String(this.headers['content-type'] ?? '').startsWith('application/json') && this.body !== '';
    return json ? JSON.parse(this.body) : this.body;
  }
}

/** One request to `url`; rejects with node's error (its `code`) when no answer comes. */
export function call(url: string | URL, method = 'GET', options: CallOptions = {}): Promise<Reply> {
  const { token, json, signal } = options;
  const body = json === undefined ? options.body : JSON.stringify(json);
  const headers: Record<string, string> = {
    ...(token === undefined ? {} : { authorization: `token ${token}` }),
    ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    ...options.headers,
    // An explicit length: Node would send a DELETE body chunked.
    ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
  };
  return new Promise((resolve, reject) => {
    const req = (new URL(url).protocol === 'https:' ? https : http).request(
      url,
      { method, headers, agent: false, ...(signal ? { signal } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve(new Reply(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
