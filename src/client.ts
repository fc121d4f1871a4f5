// createGiteaClient: an openapi-fetch client typed by the contract, with Gitea's credentials,
// path safety, a timeout, retries, and errors that name the operation.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../generated/api.js';
import { operationIds } from '../generated/operation-ids.js';
import { assertSecure, authorization, type Auth } from './auth.js';
import { ApiError, redact, TimeoutError, toApiError, type RequestInfo } from './errors.js';
import type { GiteaClient } from './strict.js';
import { createTransport, LiteRequest, type RetryOptions } from './transport.js';

export type { GiteaClient };

export interface GiteaClientOptions {
  /** The API root, such as `https://gitea.example.org/api/v1` or the mock's `http://127.0.0.1:4010/api/v1`. */
  baseUrl: string;
  auth?: Auth;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Per request, retries included (default 30 000; 0 turns it off). */
  timeoutMs?: number;
  /** Retries of idempotent requests (default 2), or the full retry settings. */
  retry?: number | RetryOptions;
  /** A `User-Agent` header (servers; browsers ignore it). */
  userAgent?: string;
  /** Throw an `ApiError` for every non-2xx answer instead of returning `{ error }`. */
  throwOnError?: boolean;
  /** Allow credentials over plain `http:` to a host other than this machine. */
  allowInsecureHttp?: boolean;
}


type Init = { params?: { path?: Record<string, unknown>; header?: Record<string, unknown> }; baseUrl?: string } & Record<string, unknown>;
export type Result = { data?: unknown; error?: unknown; response: Response };

/** Request facts and secrets per answer, for `unwrap` and the helpers to build errors from. */
const calls = new WeakMap<Response, [RequestInfo, string[]]>();

/** The `ApiError` a non-2xx answer of this package's client stands for, else undefined. */
export function errorOf({ response, error }: Result): ApiError | undefined {
  const call = calls.get(response);
  return response.ok || !call ? undefined : toApiError(response, error, ...call);
}

export function createGiteaClient(options: GiteaClientOptions): GiteaClient {
  const { auth, baseUrl, allowInsecureHttp, throwOnError, retry, timeoutMs = 30_000 } = options;
  const headers: Record<string, string> = { ...options.headers };
  const secrets: string[] = [];
  if (auth) {
    assertSecure(baseUrl, allowInsecureHttp);
    headers.Authorization = authorization(auth);
    secrets.push(headers.Authorization.slice(6), 'token' in auth ? auth.token : auth.password);
    if (auth.sudo) headers.Sudo = auth.sudo;
  }
  if (options.userAgent) headers['User-Agent'] = options.userAgent;
  const transport = createTransport(options.fetch ?? fetch, typeof retry === 'number' ? { retries: retry } : (retry ?? {}));
  const client = createClient<paths>({ baseUrl, headers }) as unknown as Record<string, (path: string, init?: Init) => Promise<Result>> & Client<paths>;
  const otp = auth && 'otp' in auth ? auth.otp : undefined;
  // Middleware gets real Requests; without any, the cheaper LiteRequest serves.
  let middleware = 0;
  const { use, eject } = client;
  // openapi-fetch's `request(method, path)` would bypass the checks below; the type omits it too.
  delete (client as { request?: unknown }).request;
  client.use = (...added) => (use(...added), (middleware += added.length));
  client.eject = (...removed) => (eject(...removed), (middleware -= removed.length));

  for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']) {
    const send = client[method]!;
    client[method] = async (path, init = {}) => {
      // Values that URL parsing would rewrite (`..` climbs a level) never leave the client.
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        const value = init.params?.path?.[name!];
        if (value == null || /^\.{0,2}$/.test(String(value))) throw new TypeError(`${path}: path parameter ${name} is ${JSON.stringify(value) ?? 'missing'}`);
      }
      if (auth && init.baseUrl) assertSecure(init.baseUrl, allowInsecureHttp);
      const callSecrets = [...secrets];
      if (otp) {
        const code = typeof otp === 'string' ? otp : await otp();
        callSecrets.push(code);
        init = { ...init, params: { ...init.params, header: { ...init.params?.header, 'X-Gitea-OTP': code } } };
      }
      // One timer per call, retries included; composed with the caller's signal only when there is one.
      const timer = new AbortController();
      const timeout = timeoutMs > 0 && timeoutMs < Infinity ? setTimeout(() => timer.abort(), timeoutMs) : undefined;
      const callerSignal = init.signal as AbortSignal | undefined;
      const signal = callerSignal ? AbortSignal.any([callerSignal, timer.signal]) : timer.signal;
      // The answer is kept so that a body openapi-fetch cannot parse still yields its status.
      let answer: Response | undefined;
      const info = (response: Response): RequestInfo => ({ method, path, url: redact(response.url, callSecrets), operationId: operationIds[`${method} ${path}`] });
      let result: Result;
      try {
        result = await send(path, {
          ...init,
          signal,
          ...(middleware ? {} : { Request: LiteRequest }),
          fetch: async (request: Request | LiteRequest) => (answer = await transport(request)),
        });
      } catch (error) {
        if (timer.signal.aborted && !callerSignal?.aborted) throw new TimeoutError(`${method} ${path} timed out after ${timeoutMs} ms`, { cause: error });
        if (!(error instanceof SyntaxError && answer)) throw error;
        // Fetch drops the body of a 205 (E8 sends one): not an error.
        if (answer.status === 205) return { response: answer };
        throw new ApiError(answer.status, redact(`unreadable JSON (${error.message})`, callSecrets), info(answer), answer.headers, undefined);
      } finally {
        clearTimeout(timeout);
      }
      if (!result.response.ok) {
        calls.set(result.response, [info(result.response), callSecrets]);
        if (throwOnError) throw errorOf(result);
      }
      return result;
    };
  }
  return client as unknown as GiteaClient;
}
