// Paging as Gitea does it: `page` and `limit` read as `strconv.Atoi` reads them, `X-Total-Count` and a `Link`.
import { goDecimal } from '../front/validation.js';

const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 50;

/** `all` sliced for the request's `page` and `limit`; the links keep its other query parameters, as Gitea's. */
export function paginate<T>(all: readonly T[], requestUrl: URL): { items: T[]; headers: Record<string, string> } {
  const query = requestUrl.searchParams;
  const page = Math.max(1, goDecimal(query.get('page')));
  const askedLimit = goDecimal(query.get('limit'));
  const limit = askedLimit <= 0 ? DEFAULT_LIMIT : Math.min(askedLimit, MAX_LIMIT);
  const lastPage = Math.max(1, Math.ceil(all.length / limit));
  const items = all.slice((page - 1) * limit, page * limit);

  // Links are computed from the page clamped to the last one, as Gitea's paginator does.
  const current = Math.min(page, lastPage);
  const link = (n: number, rel: string): string => {
    const target = new URL(requestUrl);
    target.searchParams.set('page', String(n));
    return `<${target.href}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (current < lastPage) links.push(link(current + 1, 'next'), link(lastPage, 'last'));
  if (current > 1) links.push(link(1, 'first'), link(current - 1, 'prev'));

  const headers: Record<string, string> = { 'X-Total-Count': String(all.length) };
  if (links.length > 0) headers.Link = links.join(',');
  return { items, headers };
}
