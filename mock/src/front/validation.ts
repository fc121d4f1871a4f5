// How the front reads a request for Prism's validators, and how it words what they find: shared by
// the answering front (app.ts) and the proxy's request check (server.ts).
import type { IHttpRequest } from '@stoplight/prism-http';
import { JSON_TYPE } from './errors.js';
import { clip } from '../contract/clip.js';

export type Diagnostic = { path?: string[]; message: string; code?: string | number; severity: number };

/** The errors among Prism's diagnostics (a Left of its validators); warnings do not count. */
export function errorsOf(result: { _tag: 'Left'; left: readonly Diagnostic[] } | { _tag: 'Right' }): Diagnostic[] {
  return result._tag === 'Left' ? result.left.filter((diagnostic) => diagnostic.severity === 0) : [];
}

/** Prism lists an enum's values joined by commas and writes `null` as nothing: name it. */
export function namingNull(message: string): string {
  return message.replace(/(allowed values: [^;]*?), ?(?=$|;)/, '$1, null');
}

/** Violations a message names, at most; it counts the rest. */
export const LISTED_VIOLATIONS = 20;
/** Longest violation named, in characters: a property name may be megabytes long. */
const VIOLATION_CHARS = 500;

/** `items` joined by `; `, at most LISTED_VIOLATIONS of them, then how many of `total` were left out. */
function listViolations(items: readonly string[], total = items.length): string {
  const listed = items.slice(0, LISTED_VIOLATIONS).map((item) => clip(item, VIOLATION_CHARS));
  const more = total - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}

/** Prism's diagnostics in one readable line, such as `body.permission: must be equal to one of …`, with at most LISTED_VIOLATIONS named. */
export function describeViolations(
  violations: readonly { path?: string[]; message: string; code?: string | number }[],
): string {
  const named = violations.slice(0, LISTED_VIOLATIONS).map((v) => {
    // Gitea's binding words a content type it cannot read this way.
    if (String(v.code) === '415') return `[]: Unsupported Content-Type (${v.message})`;
    return v.path && v.path.length > 0 ? `${v.path.join('.')}: ${namingNull(v.message)}` : namingNull(v.message);
  });
  return listViolations(named, violations.length);
}

/**
 * The path's segments percent-decoded, or undefined when one holds a broken escape or bad UTF-8,
 * which Prism's router and the sandbox would throw on. The result is used: a bundler takes a call
 * of decodeURIComponent whose result is dropped for pure, and removes it.
 */
export function decodedSegments(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

/** Content type as Gitea labels it: JSON without a space before the charset, text with one. */
export function contentTypeFor(prismType: string | undefined): string | undefined {
  if (prismType === undefined) return undefined;
  const mediaType = (prismType.split(';')[0] ?? '').trim();
  if (mediaType.endsWith('json')) return JSON_TYPE;
  return mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType;
}

export type PrismMethod = IHttpRequest['method'];
