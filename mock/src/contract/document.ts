// The document as data, and the walks over it (local `#/…` refs only) the suites, proxy, live mode and receiver share.
export type Json = null | boolean | number | string | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const escapePointerSegment = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** `['paths', '/a/{b}', 'get']` -> `/paths/~1a~1{b}/get` */
export function pointer(segments: readonly string[]): string {
  return segments.map((s) => `/${escapePointerSegment(s)}`).join('');
}

export function resolvePointer(doc: Json, ref: string): Json | undefined {
  if (ref === '#') return doc;
  if (!ref.startsWith('#/')) return undefined;
  let node: Json | undefined = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node)) node = Object.hasOwn(node, key) ? node[key] : undefined;
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Follows `$ref` chains of reference objects, not schemas' (callers inspect those): the value, its place, the refs. */
export function deref(doc: Json, value: Json | undefined, location: string) {
  const refs: string[] = [];
  let current = value;
  let where = location;
  while (isObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (refs.includes(ref)) break; // cycle: report what we have
    refs.push(ref);
    where = ref.slice(1);
    current = resolvePointer(doc, ref);
  }
  return { value: current as Json | undefined, location: where, refs };
}

export type Operation = { path: string; method: string; pathItem: JsonObject; operation: JsonObject; location: string };

/** The operations of the path items under `section` (`paths` or `webhooks`), each with the key it stands under as its `path`. */
function operationsIn(doc: JsonObject, section: 'paths' | 'webhooks'): Operation[] {
  const result: Operation[] = [];
  const items = isObject(doc[section]) ? doc[section] : {};
  for (const [path, item] of Object.entries(items)) {
    const pathItem = deref(doc, item, pointer([section, path])).value;
    if (!isObject(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (isObject(operation))
        result.push({ path, method, pathItem, operation, location: pointer([section, path, method]) });
    }
  }
  return result;
}

export const listOperations = (doc: JsonObject): Operation[] => operationsIn(doc, 'paths');

export const listWebhooks = (doc: JsonObject): Operation[] => operationsIn(doc, 'webhooks');

/** The actions the JSON body of the webhook `type` declares: the `action` enum of the last part of its `allOf` with one
 * (the event's own list, after the payload, narrows the payload's), else the schema's; undefined without (push …). */
export function webhookActions(doc: JsonObject, type: string): string[] | undefined {
  const item = isObject(doc.webhooks) ? doc.webhooks[type] : undefined;
  const schema = resolvePointer(item ?? null, '#/post/requestBody/content/application~1json/schema');
  const actionsIn = (node: Json | undefined) => {
    const part = isObject(node) && typeof node.$ref === 'string' ? resolvePointer(doc, node.$ref) : node;
    return resolvePointer(part ?? null, '#/properties/action/enum') as string[] | undefined;
  };
  const parts = isObject(schema) && Array.isArray(schema.allOf) ? schema.allOf : [];
  return parts.map(actionsIn).findLast(Boolean) ?? actionsIn(schema);
}

/** Path-level and operation-level parameters, resolved; operation-level ones override by name+in. */
export function operationParameters(doc: JsonObject, op: Operation) {
  const merged = new Map<string, { param: JsonObject; location: string; ref: boolean }>();
  const add = (list: Json | undefined, base: string): void => {
    if (!Array.isArray(list)) return;
    list.forEach((entry, i) => {
      const { value, location, refs } = deref(doc, entry, `${base}/parameters/${i}`);
      if (isObject(value)) merged.set(`${value.in}:${value.name}`, { param: value, location, ref: refs.length > 0 });
    });
  };
  add(op.pathItem.parameters, op.location.slice(0, op.location.lastIndexOf('/')));
  add(op.operation.parameters, op.location);
  return [...merged.values()];
}

/** Whether a server profile is one of Forgejo's (`forgejo-11` …), whose headers and version differ from Gitea's. */
export const isForgejo = (profile: string | undefined): boolean => profile?.startsWith('forgejo-') === true;

/** The server profile a document is (`info.x-profile`, set by profiles/<name>.yaml), or undefined for another. */
export function profileOf(document: Record<string, unknown>): string | undefined {
  const profile = isObject(document.info) ? document.info['x-profile'] : undefined;
  return typeof profile === 'string' ? profile : undefined;
}
