// createGiteaClient: an openapi-fetch client typed by the contract, with Gitea's credentials,
// path safety, a timeout, retries, and errors that name the operation.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../generated/api.js';
import type { ServerProfile } from '../generated/profiles.js';
import { prefixHint } from './api-prefix.js';
import { authorization, check, checkAuth, checkBaseUrl, FIELD, WORD, type Auth } from './auth.js';
import { ApiError, TimeoutError } from './errors.js';
import { CREDENTIAL_HEADER, scrub } from './redact.js';
import type { GiteaClient } from './strict.js';
import {
  BodyTooLarge,
  boundedBody,
  checkCount,
  createTransport,
  LiteRequest,
  unfollowed,
  type RetryOptions,
} from './transport.js';

export type { GiteaClient };

/** A client of this package for any profile, made with `throwOnError` or without: what its helpers take. */
export type AnyClient = GiteaClient<boolean, ServerProfile>;

export interface GiteaClientOptions {
  /** The API root, such as `https://gitea.example.org/api/v1` or the mock's `http://127.0.0.1:4010/api/v1`. */
  baseUrl: string;
  auth?: Auth;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * Milliseconds per call, retries included, after which it rejects with a `TimeoutError`
   * (default: none, as fetch; 2^31 ms and more mean none). A call's own `timeoutMs` overrides
   * it: repoMigrate's migration runs before Gitea answers and can take minutes.
   */
  timeoutMs?: number;
  /** Retries of idempotent requests (default 2), or the full retry settings. */
  retry?: number | RetryOptions;
  /** A `User-Agent` header (servers; browsers ignore it). */
  userAgent?: string;
  /** Throw an `ApiError` for every non-2xx answer instead of returning `{ error }`. */
  throwOnError?: boolean;
  /** Allow credentials over plain `http:` to a host other than this machine. */
  allowInsecureHttp?: boolean;
  /**
   * Most bytes read of one answer's body, counted after decompression (default 64 MiB;
   * `Infinity` for no bound): past it, reading stops and the call throws an `ApiError` with the
   * answer's status that says so. A gzip answer of a megabyte can otherwise inflate to gigabytes.
   */
  maxBodyBytes?: number;
  /**
   * The profile of the server the client talks to, such as `forgejo-11` (`detectServer` finds it;
   * default `gitea-1.27`, the contract's base): the client's types leave out the operations that
   * server has no route for.
   */
  server?: ServerProfile;
}

type Init = {
  params?: { path?: Record<string, unknown>; header?: Record<string, unknown> };
  baseUrl?: string;
  headers?: unknown;
  signal?: AbortSignal | undefined;
  timeoutMs?: unknown;
} & Record<string, unknown>;
export type Result = { data?: unknown; error?: unknown; response: Response };
type Method = (path: string, init?: Init) => Promise<Result>;

/** The error of each non-2xx answer of this package's clients, made when asked for: for `unwrap` and the helpers. */
const failures = new WeakMap<Response, () => ApiError>();
/**
 * What each client knows beyond its methods: its base URL, and every secret (its credentials, and
 * the one-time codes and credential headers it sent).
 */
const clientFacts = new WeakMap<object, { baseUrl: string; secrets: string[] }>();

/** `error` as it may leave a helper of `client`: every secret the client knows redacted. */
export function scrubFor(client: AnyClient, error: unknown): unknown {
  return scrub(error, clientFacts.get(client)?.secrets ?? []);
}

/** The base URL a client of this package was made with. */
export function baseUrlOf(client: AnyClient): string | undefined {
  return clientFacts.get(client)?.baseUrl;
}

/** The `ApiError` a non-2xx answer of this package's client stands for, else undefined. */
export function errorOf(response: Response): ApiError | undefined {
  return failures.get(response)?.();
}

/** Whether `body` is the service's JSON error body (`{ message, url }` and the like), which `{ error }` hands on as it came. */
function isServiceError(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string';
}

/** Each URL template split once at its parameters: literal text at even indexes, names at odd ones. */
const templates = new Map<string, string[]>();

/**
 * openapi-fetch's path serializer, for `url` (base URL and path template): each `{name}` becomes
 * its value percent-encoded, so no value can leave its segment; a missing value, and one that URL
 * parsing would rewrite (`..` climbs a level), never leave the client.
 */
function fillPath(url: string, params: Record<string, unknown>): string {
  let parts = templates.get(url);
  if (!parts) {
    // Per-call base URLs make new templates: the cache starts over rather than grow past 64.
    if (templates.size > 63) templates.clear();
    templates.set(url, (parts = url.split(/\{([^}]+)\}/)));
  }
  let filled = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const value = params[parts[i]!];
    if (value == null || /^\.{0,2}$/.test(String(value)))
      throw new TypeError(`${url}: path parameter ${parts[i]} is ${JSON.stringify(value) ?? 'missing'}`);
    filled += encodeURIComponent(String(value)) + parts[i + 1];
  }
  return filled;
}

/** A timeout is a number of milliseconds; 0, and 2^31 or more (Infinity too), mean none. */
const checkTimeout = (name: string, ms: unknown): number => checkCount(name, ms, 'milliseconds (0 for none)');

/** A client whose calls throw an `ApiError` for every non-2xx answer, so `data` of one that resolves is there. */
export function createGiteaClient<const Server extends ServerProfile = 'gitea-1.27'>(
  options: GiteaClientOptions & { server?: Server; throwOnError: true },
): GiteaClient<true, Server>;
export function createGiteaClient<const Server extends ServerProfile = 'gitea-1.27'>(
  options: GiteaClientOptions & { server?: Server },
): GiteaClient<false, Server>;
export function createGiteaClient(options: GiteaClientOptions): AnyClient {
  const { auth, baseUrl, throwOnError, retry } = options;
  const credentials = !!auth && !options.allowInsecureHttp;
  checkBaseUrl('baseUrl', baseUrl, credentials);
  const timeoutMs = checkTimeout('timeoutMs', options.timeoutMs ?? 0);
  const maxBodyBytes = checkCount('maxBodyBytes', options.maxBodyBytes ?? 64 * 1024 * 1024, 'bytes');
  const headers: Record<string, string> = { ...options.headers };
  const secrets: string[] = [];
  for (const name in headers) {
    check(`headers.${name}`, headers[name], FIELD);
    if (CREDENTIAL_HEADER.test(name)) secrets.push(headers[name]!);
  }
  let otp: (() => unknown) | undefined;
  if (auth) {
    checkAuth(auth);
    headers.Authorization = authorization(auth);
    // The token or the Basic credential, and the token or password itself.
    secrets.push(headers.Authorization.slice(6), 'token' in auth ? auth.token : auth.password);
    if ('otp' in auth && auth.otp) {
      if (typeof auth.otp === 'function') otp = auth.otp;
      else secrets.push((headers['X-Gitea-OTP'] = auth.otp));
    }
    if (auth.sudo) headers.Sudo = auth.sudo;
  }
  if (options.userAgent) {
    check('userAgent', options.userAgent, FIELD);
    headers['User-Agent'] = options.userAgent;
  }
  const fixed = secrets.length;
  /** Adds a secret met while sending; only the 32 latest such are kept. */
  const remember = (value: unknown): void => {
    if (typeof value === 'string' && !secrets.includes(value)) {
      secrets.push(value);
      if (secrets.length > fixed + 32) secrets.splice(fixed, 1);
    }
  };
  // The global fetch as it is at each call, so one replaced after the client was made (MSW's
  // setupServer, vi.stubGlobal) is the one used.
  const baseFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  if (typeof baseFetch !== 'function') throw new TypeError('fetch is not a function');
  const transport = createTransport(baseFetch, retry);
  const client = createClient<paths>({ baseUrl, headers, pathSerializer: fillPath }) as unknown as Record<
    string,
    Method
  > &
    Client<paths>;
  // Middleware gets real Requests; until there is one, the cheaper LiteRequest serves.
  let Lite: typeof LiteRequest | undefined = LiteRequest;
  const { use } = client;
  // openapi-fetch's `request(method, path)` would bypass the checks below; the type omits it too.
  delete (client as { request?: unknown }).request;
  client.use = (...added) => {
    Lite = undefined;
    use(...added);
  };

  for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']) {
    const send = client[method]!;
    // Whoever raises an error in here (fetch, openapi-fetch, a middleware, the transport), it leaves redacted.
    client[method] = async (path, init = {}) => {
      let timer: AbortSignal | undefined;
      let limit = timeoutMs;
      // The answer is kept so that a body openapi-fetch cannot parse still yields its status.
      let answer: Response | undefined;
      try {
        if (init.baseUrl !== undefined) checkBaseUrl('init.baseUrl', init.baseUrl, credentials);
        if (init.timeoutMs !== undefined) limit = checkTimeout('init.timeoutMs', init.timeoutMs);
        // openapi-fetch fills the path only when given path parameters: a template is refused here without them.
        if (!init.params?.path && path.includes('{')) fillPath(path, {});
        // Credentials passed for this call only are secrets too.
        if (init.headers || init.params?.header)
          for (const extra of [init.headers, init.params?.header] as Record<string, unknown>[])
            for (const name in extra) if (CREDENTIAL_HEADER.test(name)) remember(extra[name]);
        if (otp) {
          const code = await otp();
          remember(code);
          check('the code auth.otp() returned', code, WORD);
          init = { ...init, params: { ...init.params, header: { ...init.params?.header, 'X-Gitea-OTP': code } } };
        }
        // One timer per call, retries included, and only when asked for: fetch follows any signal
        // at a share of a request's cost. Runtimes fire a timer longer than 2^31 - 1 ms at
        // once, so such a limit means none. Composed with the caller's signal only when there is one.
        let { signal } = init;
        if (limit > 0 && limit < 2 ** 31) {
          timer = AbortSignal.timeout(limit);
          signal = signal ? AbortSignal.any([signal, timer]) : timer;
        }
        const result = await send(path, {
          ...init,
          timeoutMs: undefined,
          signal,
          Request: Lite ?? Request,
          fetch: async (request: Request | LiteRequest) => {
            const received = await transport(request, signal);
            answer = boundedBody(received, maxBodyBytes);
            const refusal = unfollowed.get(received);
            if (refusal) unfollowed.set(answer, refusal);
            return answer;
          },
        });
        const { response, error } = result;
        if (!response.ok) {
          const refusal = unfollowed.get(response);
          if (refusal) {
            // A redirect the transport would not follow: the error says why, in either mode.
            const failure = scrub(new ApiError(method, path, response, error, refusal), secrets);
            failures.set(response, () => failure);
            result.error = failure;
          } else {
            // A 404 under a base URL without /api/v1 came from the web pages, not from the API.
            const hint = response.status === 404 ? prefixHint(init.baseUrl ?? baseUrl) : undefined;
            failures.set(response, () => scrub(new ApiError(method, path, response, error, undefined, hint), secrets));
            // The service's JSON error body as it came, with the same redaction as a thrown error
            // (a server may echo a credential in it); an answer without one (plain text, no body,
            // `null`), or one the hint explains, is the ApiError: `error.message` reads either way.
            result.error = isServiceError(error) && !hint ? scrub(error, secrets) : errorOf(response);
          }
          if (throwOnError) throw errorOf(response);
        }
        return result;
      } catch (error) {
        // Fetch drops the body of a 205 (notifyReadThread sends one): openapi-fetch failing to parse it is no error.
        if (error instanceof SyntaxError && answer?.status === 205) return { response: answer };
        throw scrub(
          timer?.aborted && !init.signal?.aborted
            ? new TimeoutError(`${method} ${path} timed out after ${limit} ms`, { cause: error })
            : error instanceof SyntaxError && answer
              ? // Not the parser's message: V8 quotes the start of the body, which may hold part of a secret.
                // Under a base URL without /api/v1 the body is most likely a web page.
                new ApiError(
                  method,
                  path,
                  answer,
                  undefined,
                  'unreadable JSON: the body is not valid JSON',
                  prefixHint(init.baseUrl ?? baseUrl),
                )
              : error instanceof BodyTooLarge && answer
                ? new ApiError(method, path, answer, undefined, error.message)
                : error,
          secrets,
        );
      }
    };
  }
  clientFacts.set(client, { baseUrl, secrets });
  return client as unknown as AnyClient;
}
