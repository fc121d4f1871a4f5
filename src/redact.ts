// Redaction: every secret the client knows is replaced wherever it could surface in an error,
// whoever raised the error, its causes and attached objects included.

const MARK = '[REDACTED]';

/** Header names whose values are credentials. */
export const CREDENTIAL_HEADER = /auth|token|secret|password|cookie|otp|key|session/i;

/** Each secret's pattern, made once. Per-call secrets come and go: past 256 it starts over. */
const patterns = new Map<string, RegExp>();

/** `text` as a pattern that matches it literally: each code point as `\u{…}`. */
function literal(text: string): string {
  let out = '';
  for (const char of text) out += `\\u{${char.codePointAt(0)!.toString(16)}}`;
  return out;
}

/**
 * The ways a server may write one character of a secret back: as it is, in upper or lower case,
 * JSON-escaped (`\"`, `\n`, `\/`, or `\uXXXX`, which Go uses for `&`, `<`, `>`, U+2028 and U+2029
 * and other encoders for any character), and percent-encoded (each UTF-8 byte, `+` for a space).
 * The pattern's `i` flag takes the hex digits in any case.
 */
function writings(char: string): string {
  const forms = new Set([char, char.toLowerCase(), char.toUpperCase(), JSON.stringify(char).slice(1, -1)].map(literal));
  let escaped = '';
  for (let i = 0; i < char.length; i++) escaped += `\\\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  forms.add(escaped);
  if (char === '/') forms.add(literal('\\/'));
  // An unpaired surrogate has no UTF-8 bytes.
  if (char.isWellFormed())
    forms.add([...new TextEncoder().encode(char)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''));
  if (char === ' ') forms.add(literal('+'));
  return `(?:${[...forms].join('|')})`;
}

/** A pattern that finds `secret` in any of the ways each of its characters may be written, in any case. */
function patternOf(secret: string): RegExp {
  let pattern = patterns.get(secret);
  if (!pattern) {
    if (patterns.size >= 256) patterns.clear();
    let source = '';
    for (const char of secret) source += writings(char);
    patterns.set(secret, (pattern = new RegExp(source, 'giu')));
  }
  return pattern;
}

/**
 * Replaces each secret (longest first) wherever it appears: as written, in any case (a server may
 * lower-case a Basic credential, and base64 lower-cased is cheaply recovered), JSON-escaped by any
 * encoder and percent-encoded; and `token`/`access_token` query values. Secrets of three
 * characters or fewer are left alone: they would match ordinary words.
 */
export function redact(text: string, secrets: readonly string[]): string {
  for (const secret of secrets.filter((secret) => secret.length > 3).sort((a, b) => b.length - a.length))
    text = text.replace(patternOf(secret), MARK);
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
    if (typeof item === 'string') {
      const text = redact(item, secrets);
      changed ||= text !== item;
      return text;
    }
    if (typeof item !== 'object' || !item || ArrayBuffer.isView(item) || item instanceof ArrayBuffer) return item;
    if (memo.has(item)) return memo.get(item);
    if (item instanceof URL) return copy(item.href);
    // Their entries, copied, make a new one of the same kind.
    if (item instanceof Headers || item instanceof Map || item instanceof Set)
      return new (item.constructor as new (entries: unknown) => unknown)(copy([...item]));
    if (item instanceof Request || item instanceof Response) {
      return copy({
        ...('method' in item ? { method: item.method } : { status: item.status }),
        url: item.url,
        headers: item.headers,
      });
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
      Reflect.defineProperty(out, typeof key === 'string' ? copy(key) : key, descriptor);
    }
    return out;
  };
  const result = copy(value);
  return changed ? result : value;
}
