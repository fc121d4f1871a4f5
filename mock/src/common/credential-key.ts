// The key a credential's sandbox world and request journal are kept under.
import { sha256 } from '@noble/hashes/sha2';
import { hex, utf8Bytes } from './bytes.js';

type Process = { getBuiltinModule?(id: string): Partial<typeof import('node:crypto')> | undefined };
/** Node's one-shot hash where there is one, found without an import the browser build would have to resolve. */
const nativeHash = (globalThis as { process?: Process }).process?.getBuiltinModule?.('node:crypto')?.hash;

/** The credential's SHA-256, so none is kept; synchronous: Node's hash (a twentieth the cost), else @noble/hashes. */
export function keyOf(credential: string): string {
  return typeof nativeHash === 'function'
    ? nativeHash('sha256', credential, 'hex')
    : hex(sha256(utf8Bytes(credential)));
}
