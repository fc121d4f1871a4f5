// The client's method types: openapi-fetch's, plus an excess-field check on request bodies, an
// `error` that always has a `message`, and `data` that is there when non-2xx answers throw.
// openapi-fetch infers the whole init object generically, so TypeScript's usual check for
// unknown fields never runs and a misspelt body field compiles; here it becomes `never`. For a
// server profile, the paths its server has no route for are left out, so calling one does not compile.
import type { Client, FetchResponse, MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from '../generated/api.js';
import type { AbsentOperations, ServerProfile } from '../generated/profiles.js';
import type { ApiError } from './errors.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
// biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` asks whether K is optional
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
type BodyOf<Op> = Op extends { requestBody?: { content: infer C } } ? C[keyof C] : never;
type NoUnknownBodyFields<Init, Op> = Init extends { body: infer B }
  ? [B] extends [never]
    ? unknown
    : [B] extends [readonly unknown[] | FormData | Blob]
      ? unknown
      : [B] extends [object]
        ? { body: { [K in Exclude<keyof B, keyof BodyOf<Op>>]: never } }
        : unknown
  : unknown;
type InitParam<Init> =
  RequiredKeys<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** What a call takes beyond openapi-fetch's options. */
interface CallOptions {
  /** Milliseconds for this call, retries included, instead of the client's `timeoutMs`; 0 for none. */
  timeoutMs?: number;
}

/**
 * What `{ error }` holds: the service's JSON error body as the document declares it, or the
 * `ApiError` for an answer without one (the plain text of a crash, no body, `null`), so that
 * `error.message` reads without narrowing.
 */
type CallError<E> = Exclude<E, string | null | undefined> | ApiError;

/** openapi-fetch's answer with `error` as the client hands it; with `throwOnError`, the 2xx branch alone. */
type Answer<R, Throws extends boolean> = Throws extends true
  ? Extract<R, { data: unknown }>
  : R extends { error: infer E }
    ? { data?: never; error: CallError<E>; response: Response }
    : R;

type Caller<M extends Method, Throws extends boolean, Server extends ServerProfile> = <
  P extends PathsWithMethod<M, Server>,
  Init extends MaybeOptionalInit<paths[P], M> & CallOptions,
>(
  url: P,
  ...init: InitParam<Init & NoUnknownBodyFields<Init, paths[P][M]>>
) => Promise<
  Answer<FetchResponse<Extract<paths[P][M], Record<string | number, unknown>>, Init, `${string}/${string}`>, Throws>
>;

/** Whether a profile's server lacks the operation; for a union of profiles, whether any of them does. */
type Lacks<Server extends ServerProfile, P, M extends Method> = Server extends unknown
  ? P extends keyof AbsentOperations[Server]
    ? M extends AbsentOperations[Server][P]
      ? true
      : never
    : never
  : never;

/** The paths that have an operation for the method on the server. */
type PathsWithMethod<M extends Method, Server extends ServerProfile> = {
  [P in keyof paths]: paths[P][M] extends undefined ? never : true extends Lacks<Server, P, M> ? never : P;
}[keyof paths];

/**
 * An openapi-fetch client for the contract's paths. `Throws`: made with `throwOnError: true`, so a
 * call that resolves has `data` (a non-2xx answer throws instead). `Server`: the profile of the
 * server it talks to (`server` of its options); a union stands for a client of any of them and
 * offers only the operations every one of them has.
 */
export interface GiteaClient<Throws extends boolean = false, Server extends ServerProfile = 'gitea-1.27'> {
  GET: Caller<'get', Throws, Server>;
  PUT: Caller<'put', Throws, Server>;
  POST: Caller<'post', Throws, Server>;
  DELETE: Caller<'delete', Throws, Server>;
  OPTIONS: Caller<'options', Throws, Server>;
  HEAD: Caller<'head', Throws, Server>;
  PATCH: Caller<'patch', Throws, Server>;
  TRACE: Caller<'trace', Throws, Server>;
  use: Client<paths>['use'];
  eject: Client<paths>['eject'];
}
