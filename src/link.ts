// A bounded Link header parser: no backtracking-prone expression and a cap on input size, so a
// hostile header costs microseconds (the ReDoS lesson of Octokit's paginator).

/** The URL of the `rel="next"` link, or undefined. */
export function nextLink(header: string | null): string | undefined {
  if (!header || header.length > 16_384) return undefined;
  for (const part of header.split(',')) {
    const [target, ...params] = part.split(';');
    if (params.some((param) => /^\s*rel="?next"?\s*$/i.test(param))) return /<([^>]*)>/.exec(target!)?.[1];
  }
  return undefined;
}
