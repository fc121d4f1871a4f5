// Pagination over the list operations (listPackageVersions, orgListTeamMembers, adminGetAllOrgs):
// follows `Link: rel="next"`, falling back to `X-Total-Count`, and stops at an empty page or after
// `maxPages`.
import type { FetchOptions } from 'openapi-fetch';
import type { paths } from '../generated/api.js';
import { scrubFor, type AnyClient, type Result } from './client.js';
import { nextLink } from './link.js';
import { checkCount } from './transport.js';
import { unwrap } from './unwrap.js';

/** The paths whose answers are pages of a list. */
export type PaginatedPath = '/admin/orgs' | '/teams/{id}/members' | '/packages/{owner}/{type}/{name}';
type Item<P extends PaginatedPath> = paths[P]['get']['responses'][200]['content']['application/json'][number];
type Init<P extends PaginatedPath> = FetchOptions<paths[P]['get']>;
type Rest<P extends PaginatedPath> =
  // biome-ignore lint/complexity/noBannedTypes: `{} extends T` asks whether every key of T is optional
  {} extends Init<P> ? [init?: Init<P>, options?: PaginateOptions] : [init: Init<P>, options?: PaginateOptions];

export interface PaginateOptions {
  /** Stop after this many pages (default: no limit). */
  maxPages?: number;
}

export async function* paginate<P extends PaginatedPath>(
  client: AnyClient,
  path: P,
  ...[init = {} as Init<P>, options]: Rest<P>
): AsyncGenerator<Item<P>, void, undefined> {
  try {
    const { params } = init as { params?: { query?: { page?: number; limit?: number } } };
    const query = params?.query;
    const get = client.GET as (path: string, init: unknown) => Promise<Result>;
    for (
      let page = query?.page ?? 1, pages = checkCount('maxPages', options?.maxPages ?? Infinity, 'pages');
      pages-- > 0;
    ) {
      const call = get(path, { ...init, params: { ...params, query: { ...query, page } } });
      const items = ((await unwrap(call)) ?? []) as Item<P>[];
      yield* items;
      const { headers, url } = (await call).response;
      const link = headers.get('link');
      const next =
        link === null
          ? Number(headers.get('x-total-count')) > page * (query?.limit ?? 30)
            ? page + 1
            : 0
          : Number(new URL(nextLink(link) ?? '?', url || 'http://x').searchParams.get('page'));
      if (!items.length || !(next > page)) return;
      page = next;
    }
  } catch (error) {
    // The next page's URL comes from the server: a parse error of it would quote it.
    throw scrubFor(client, error);
  }
}

/** Every item of every page, in order. */
export async function collectAll<P extends PaginatedPath>(
  client: AnyClient,
  path: P,
  ...rest: Rest<P>
): Promise<Item<P>[]> {
  const items: Item<P>[] = [];
  for await (const item of paginate(client, path, ...rest)) items.push(item);
  return items;
}
