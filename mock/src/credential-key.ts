// The key a credential's sandbox world and request journal are kept under.
import { sha256 } from '@noble/hashes/sha2';
import { hex, utf8Bytes } from './bytes.js';

/**
 * The credential's SHA-256 (of its UTF-8 bytes, in hexadecimal), so no credential is kept in
 * memory maps or on disk. Synchronous and the same in every runtime (@noble/hashes): Web Crypto's
 * digest is asynchronous, and offered by browsers on secure origins only.
 */
export function keyOf(credential: string): string {
  return hex(sha256(utf8Bytes(credential)));
}
