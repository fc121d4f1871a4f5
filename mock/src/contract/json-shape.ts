// How large and how deep a parsed JSON value is, without recursion: what validators are given is bounded by it.
/** Values of a JSON body the checks read whole, at most: a page of Gitea's largest records holds a few thousand. */
export const MAX_CHECKED_VALUES = 20_000;

/** The values counted and the deepest nesting (a scalar is 0) of `value`, the walk stopped past either bound. */
export function jsonShape(value: unknown, maxValues: number, maxDepth: number): { values: number; depth: number } {
  const stack: [unknown, number][] = [[value, 0]];
  let values = 1;
  let depth = 0;
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
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
