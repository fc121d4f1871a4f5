// How the tests look for a secret in an error: every way an error is commonly printed or logged,
// each cause included, searched for each form a secret takes in text, in any case.
import { inspect } from 'node:util';
import { expect } from 'vitest';

/** Every way an error is commonly printed or logged, down each cause. */
export function renderings(error: unknown): string[] {
  const texts: string[] = [];
  for (
    let item = error, depth = 0;
    item !== undefined && item !== null && depth < 10;
    item = (item as { cause?: unknown }).cause, depth++
  ) {
    const { message, stack } = item as { message?: unknown; stack?: unknown };
    texts.push(String(message), String(item), String(stack), inspect(item, { depth: 8 }));
    try {
      texts.push(JSON.stringify(item) ?? '');
    } catch {
      // A structure JSON cannot hold is not a leak.
    }
  }
  return texts;
}

/** `text` escaped inside a JSON string as Go's encoding/json writes it: &, <, >, U+2028 and U+2029 as \u escapes too. */
export function goJsonEscaped(text: string): string {
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/[&<>\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The forms a secret takes in text: as written, escaped inside JSON (as JavaScript and as Go write it), percent-encoded. */
export function forms(secret: string): string[] {
  let encoded = secret;
  try {
    encoded = encodeURIComponent(secret);
  } catch {
    // unpaired surrogate
  }
  return [secret, JSON.stringify(secret).slice(1, -1), goJsonEscaped(secret), encoded];
}

export function expectNoSecret(error: unknown, secrets: readonly string[]): void {
  for (const text of renderings(error)) {
    // In any case: a server may change it (a lower-cased Basic credential is cheaply recovered).
    for (const secret of secrets)
      for (const form of forms(secret))
        expect(text.toLowerCase(), `a rendering holds ${JSON.stringify(form)} in some case`).not.toContain(
          form.toLowerCase(),
        );
  }
}
