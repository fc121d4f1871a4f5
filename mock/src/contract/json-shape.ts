// How large and how deep a parsed JSON value is, found without recursion (a value nested a
// million levels deep would overflow the stack of any recursive walk) and without walking past
// the bounds asked about. Validators make an error per failing value and recurse as deep as the
// value goes, so what they are given is bounded by this first.

/**
 * Values of a JSON body the checks read whole, at most: a validator makes an error for each value
 * that breaks the document, so a 10 MB list of five million wrong items would hold gigabytes of
 * them. No request of the twenty operations comes near it, and a page of Gitea's largest records
 * holds a few thousand.
 */
export const MAX_CHECKED_VALUES = 20_000;

export interface JsonShape {
  /** Values counted (objects, arrays and scalars alike); past `maxValues`, where the count stopped. */
  values: number;
  /** Deepest nesting seen (a scalar at the top is depth 0); past `maxDepth`, where the walk stopped. */
  depth: number;
}

/** The shape of `value`; the walk stops once it has counted more than `maxValues` values or gone deeper than `maxDepth`. */
export function jsonShape(value: unknown, maxValues: number, maxDepth: number): JsonShape {
  const stack: [unknown, number][] = [[value, 0]];
  let values = 1;
  let depth = 0;
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    if (level > depth) depth = level;
    if (depth > maxDepth) break;
    if (typeof item !== 'object' || item === null) continue;
    const children: unknown[] = Array.isArray(item) ? item : [];
    if (Array.isArray(item)) values += item.length;
    else
      for (const key in item) {
        if (++values > maxValues) break;
        children.push((item as Record<string, unknown>)[key]);
      }
    if (values > maxValues) break;
    if (children.length > 0 && level + 1 > depth) depth = level + 1;
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, level + 1]);
  }
  return { values, depth };
}
