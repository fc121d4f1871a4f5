// Gitea serves its REST API under /api/v1 of the host (or of the sub-path it is served from). A
// base URL without it is the most common first mistake: every call then reaches the web pages,
// which answer 404 or a sign-in page. The client and live mode say so, the same way.

/** The path every Gitea base URL ends in. */
const API_PREFIX = '/api/v1';

/**
 * For a base URL whose path does not end in /api/v1, the sentence that says so and the URL to try;
 * undefined for one that does, or that is no URL.
 */
export function prefixHint(baseUrl: string): string | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const { origin, pathname } = new URL(baseUrl);
  const path = pathname.replace(/\/+$/, '');
  if (path.endsWith(API_PREFIX)) return undefined;
  return `the base URL ${origin}${path} does not end in ${API_PREFIX}, where Gitea serves its API: try ${origin}${path}${API_PREFIX}`;
}
