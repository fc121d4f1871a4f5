// The client's method types: openapi-fetch's, plus an excess-field check on request bodies.
// openapi-fetch infers the whole init object generically, so TypeScript's usual check for
// unknown fields never runs and a misspelt body field compiles; here it becomes `never`.
import type { Client, FetchResponse, MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from '../generated/api.js';

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

type Caller<M extends Method> = <
  P extends PathsWithMethod<M>,
  Init extends MaybeOptionalInit<paths[P], M> & CallOptions,
>(
  url: P,
  ...init: InitParam<Init & NoUnknownBodyFields<Init, paths[P][M]>>
) => Promise<FetchResponse<Extract<paths[P][M], Record<string | number, unknown>>, Init, `${string}/${string}`>>;

/** The paths that have an operation for the method. */
type PathsWithMethod<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined ? never : P }[keyof paths];

/** An openapi-fetch client for the contract's paths. */
export interface GiteaClient {
  GET: Caller<'get'>;
  PUT: Caller<'put'>;
  POST: Caller<'post'>;
  DELETE: Caller<'delete'>;
  OPTIONS: Caller<'options'>;
  HEAD: Caller<'head'>;
  PATCH: Caller<'patch'>;
  TRACE: Caller<'trace'>;
  use: Client<paths>['use'];
  eject: Client<paths>['eject'];
}
