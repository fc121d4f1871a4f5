// How the tests look for a secret in an error: every way an error is commonly printed or logged,
// each cause included, searched for each form a secret takes in text.
import { inspect } from 'node:util';
import { expect } from 'vitest';

/** Every way an error is commonly printed or logged, down each cause. */
export function renderings(error: unknown): string[] {
  const texts: string[] = [];
  for (let item = error, depth = 0; item !== undefined && item !== null && depth < 10; item = (item as { cause?: unknown }).cause, depth++) {
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

/** The forms a secret takes in text: as written, escaped inside JSON, percent-encoded. */
export function forms(secret: string): string[] {
  let encoded = secret;
  try {
    encoded = encodeURIComponent(secret);
  } catch {
    // unpaired surrogate
  }
  return [secret, JSON.stringify(secret).slice(1, -1), encoded];
}

export function expectNoSecret(error: unknown, secrets: readonly string[]): void {
  for (const text of renderings(error)) {
    for (const secret of secrets) for (const form of forms(secret)) expect(text, `a rendering holds ${JSON.stringify(form)}`).not.toContain(form);
  }
}
