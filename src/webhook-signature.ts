// A webhook delivery's signature, checked with Web Crypto: the same code in Node 20+, browsers,
// Deno, Bun and edge runtimes. Gitea signs the JSON payload with HMAC-SHA256 keyed by the hook's
// secret and sends the hexadecimal digest in `X-Gitea-Signature`, and `sha256=` and the same
// digest in `X-Hub-Signature-256`.

const HEX_DIGEST = /^(?:sha256=)?([0-9a-fA-F]{64})$/;

/** The Web Crypto of this runtime, or a TypeError that says it is missing (an insecure page, an old runtime). */
function subtleCrypto(): SubtleCrypto {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw new TypeError('Web Crypto (crypto.subtle) is not available here: a browser offers it on https pages only');
  return subtle;
}

/** The bytes a body stands for: a string as UTF-8, as Gitea signs its text. */
export function bodyBytes(body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice();
  throw new TypeError('body is not a string, Uint8Array or ArrayBuffer');
}

/**
 * Whether `signature` is the HMAC-SHA256 of `body` keyed with `secret`, as Gitea signs a webhook
 * delivery. `body` is the payload as received: the request body of a JSON delivery, or the
 * `payload` field of a form delivery. `signature` is an `X-Gitea-Signature` value (hexadecimal)
 * or an `X-Hub-Signature-256` one (`sha256=…`). Web Crypto compares the digests in constant time.
 * An empty or malformed signature is `false`; an empty secret is a TypeError, since Gitea signs
 * nothing for a hook without one.
 */
export async function verifyWebhookSignature(
  secret: string,
  body: string | Uint8Array | ArrayBuffer,
  signature: string,
): Promise<boolean> {
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError("verifyWebhookSignature needs the hook's secret: a hook without one sends empty signatures");
  const data = bodyBytes(body);
  const digest = typeof signature === 'string' ? HEX_DIGEST.exec(signature.trim())?.[1] : undefined;
  if (digest === undefined) return false;
  const expected = new Uint8Array(32);
  for (let i = 0; i < 32; i++) expected[i] = Number.parseInt(digest.slice(2 * i, 2 * i + 2), 16);
  const subtle = subtleCrypto();
  const key = await subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  return subtle.verify('HMAC', key, expected, data);
}
