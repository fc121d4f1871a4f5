// The key a credential's sandbox world and request journal are kept under.
import { sha256 } from '@noble/hashes/sha2';
import { hex, utf8Bytes } from './bytes.js';

/** Node's own one-shot hash where there is one (Node 20.16 and later), found without an import the browser build would have to resolve. */
const nativeHash = (
  (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
    'node:crypto',
  ) as Partial<typeof import('node:crypto')> | undefined
)?.hash;

/**
 * The credential's SHA-256 (of its UTF-8 bytes, in hexadecimal), so no credential is kept in
 * memory maps or on disk. Synchronous and the same in every runtime: Node's native hash, which
 * costs a twentieth of the portable one on every request, and @noble/hashes elsewhere (Web Crypto's
 * digest is asynchronous, and offered by browsers on secure origins only). Both encode a lone
 * surrogate as U+FFFD.
 */
export function keyOf(credential: string): string {
  return typeof nativeHash === 'function'
    ? nativeHash('sha256', credential, 'hex')
    : hex(sha256(utf8Bytes(credential)));
}
