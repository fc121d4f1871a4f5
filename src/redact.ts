// Redaction: every secret the client knows is replaced wherever it could surface in an error,
// whoever raised the error, its causes and attached objects included.

const MARK = '[REDACTED]';

/**
 * Replaces each secret as written, as escaped inside JSON and as percent-encoded (longest first),
 * and `token`/`access_token` query values. Secrets of three characters or fewer are left alone:
 * they would match ordinary words.
 */
export function redact(text: string, secrets: readonly string[]): string {
  // An unpaired surrogate has no percent-encoding.
  const forms = secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1), secret.isWellFormed() ? encodeURIComponent(secret) : '']);
  for (const form of forms.filter((form) => form.length > 3).sort((a, b) => b.length - a.length)) text = text.replaceAll(form, MARK);
  return text.replace(/([?&](access_)?token=)[^&#"]*/gi, `$1${MARK}`);
}

/**
 * `value` with every secret redacted from every string reachable from it: own properties
 * (non-enumerable ones such as `message`, `stack` and `cause` too), keys, array items, and what
 * `Headers`, `Request`, `Response`, `URL`, `Map` and `Set` show when printed. Nothing is changed
 * in place: when a secret is found, the affected objects are copied (same prototype); otherwise
 * `value` itself comes back. Getters are not called.
 */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  let changed = false;
  const memo = new Map<object, unknown>();
  const copy = (item: any): any => {
    if (typeof item == 'string') {
      const text = redact(item, secrets);
      changed ||= text != item;
      return text;
    }
    if (typeof item != 'object' || !item || ArrayBuffer.isView(item) || item instanceof ArrayBuffer) return item;
    if (memo.has(item)) return memo.get(item);
    if (item instanceof URL) return copy(item.href);
    // Their entries, copied, make a new one of the same kind.
    if (item instanceof Headers || item instanceof Map || item instanceof Set) return new (item.constructor as new (entries: unknown) => unknown)(copy([...item]));
    if (item instanceof Request || item instanceof Response) {
      return copy({ ...('method' in item ? { method: item.method } : { status: item.status }), url: item.url, headers: item.headers });
    }
    // A DOMException keeps its message in an internal slot, not in a property.
    const out =
      item instanceof DOMException
        ? new DOMException(copy(item.message), item.name)
        : Array.isArray(item)
          ? []
          : Object.create(Object.getPrototypeOf(item));
    memo.set(item, out);
    for (const key of Reflect.ownKeys(item)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(item, key)!;
      if ('value' in descriptor) descriptor.value = copy(descriptor.value);
      Reflect.defineProperty(out, typeof key == 'string' ? copy(key) : key, descriptor);
    }
    return out;
  };
  const result = copy(value);
  return changed ? result : value;
}
