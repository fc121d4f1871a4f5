// createGiteaClient: an openapi-fetch client typed by the contract, with Gitea's credentials,
// path safety, a timeout, retries, and errors that name the operation.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../generated/api.js';
import { operationIds } from '../generated/operation-ids.js';
import { assertSecure, authorization, checkAuth, checkBaseUrl, checkHeader, checkOtp, type Auth } from './auth.js';
import { ApiError, TimeoutError, toApiError, type RequestInfo } from './errors.js';
import { redact, scrub } from './redact.js';
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

/** Request facts and the client's secrets per answer, for `unwrap` and the helpers to build errors from. */
const calls = new WeakMap<Response, [RequestInfo, string[]]>();
/** Every secret each client knows: its credentials, and the one-time codes and credential headers it sent. */
const clientSecrets = new WeakMap<object, string[]>();
/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /auth|token|secret|password|cookie|otp|key|session/i;

/** `error` as it may leave a helper of `client`: every secret the client knows redacted. */
export function scrubFor(client: GiteaClient, error: unknown): unknown {
  return scrub(error, clientSecrets.get(client) ?? []);
}

/** The `ApiError` a non-2xx answer of this package's client stands for, else undefined. */
export function errorOf({ response, error }: Result): ApiError | undefined {
  const call = calls.get(response);
  return response.ok || !call ? undefined : toApiError(response, error, ...call);
}

export function createGiteaClient(options: GiteaClientOptions): GiteaClient {
  const { auth, baseUrl, allowInsecureHttp, throwOnError, retry, timeoutMs = 30_000 } = options;
  checkBaseUrl('baseUrl', baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    checkHeader(name, value);
    if (CREDENTIAL_HEADER.test(name)) secrets.push(value);
  }
  if (auth) {
    checkAuth(auth);
    assertSecure(baseUrl, allowInsecureHttp);
    headers.Authorization = authorization(auth);
    secrets.push(headers.Authorization.slice(6), 'token' in auth ? auth.token : auth.password);
    if ('otp' in auth && typeof auth.otp === 'string') secrets.push(auth.otp);
    if (auth.sudo) headers.Sudo = auth.sudo;
  }
  const fixed = secrets.length;
  /** Adds a secret met while sending; only the 32 latest such are kept. */
  const remember = (value: unknown): void => {
    if (typeof value === 'string' && !secrets.includes(value)) {
      secrets.push(value);
      if (secrets.length > fixed + 32) secrets.splice(fixed, 1);
    }
  };
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
    const call = async (path: string, init: Init): Promise<Result> => {
      // Values that URL parsing would rewrite (`..` climbs a level) never leave the client.
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        const value = init.params?.path?.[name!];
        if (value == null || /^\.{0,2}$/.test(String(value))) throw new TypeError(`${path}: path parameter ${name} is ${JSON.stringify(value) ?? 'missing'}`);
      }
      if (init.baseUrl !== undefined) {
        checkBaseUrl('init.baseUrl', init.baseUrl);
        if (auth) assertSecure(init.baseUrl, allowInsecureHttp);
      }
      // Credentials passed for this call only are secrets too.
      for (const extra of init.headers || init.params?.header ? [init.headers, init.params?.header] : []) {
        for (const [name, value] of Object.entries((extra ?? {}) as Record<string, unknown>)) if (CREDENTIAL_HEADER.test(name)) remember(value);
      }
      if (otp) {
        const code: unknown = typeof otp === 'string' ? otp : await otp();
        remember(code);
        checkOtp(code, typeof otp !== 'string');
        init = { ...init, params: { ...init.params, header: { ...init.params?.header, 'X-Gitea-OTP': code } } };
      }
      // One timer per call, retries included; composed with the caller's signal only when there is one.
      const timer = new AbortController();
      const timeout = timeoutMs > 0 && timeoutMs < Infinity ? setTimeout(() => timer.abort(), timeoutMs) : undefined;
      const callerSignal = init.signal as AbortSignal | undefined;
      const signal = callerSignal ? AbortSignal.any([callerSignal, timer.signal]) : timer.signal;
      // The answer is kept so that a body openapi-fetch cannot parse still yields its status.
      let answer: Response | undefined;
      const info = (response: Response): RequestInfo => ({ method, path, url: redact(response.url, secrets), operationId: operationIds[`${method} ${path}`] });
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
        // Not the parser's message: V8 quotes the start of the body, which may hold part of a secret.
        throw new ApiError(answer.status, 'unreadable JSON: the body is not valid JSON', info(answer), scrub(answer.headers, secrets), undefined);
      } finally {
        clearTimeout(timeout);
      }
      if (!result.response.ok) {
        calls.set(result.response, [info(result.response), secrets]);
        if (throwOnError) throw errorOf(result);
      }
      return result;
    };
    // Whoever raised an error (fetch, openapi-fetch, a middleware, the transport), it leaves redacted.
    client[method] = (path, init = {}) => call(path, init).catch((error: unknown) => Promise.reject(scrub(error, secrets)));
  }
  clientSecrets.set(client, secrets);
  return client as unknown as GiteaClient;
}
