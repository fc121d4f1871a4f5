// The credential checks Gitea makes before routing: the mock has no users, so any well-formed credential is accepted.
import { base64Text } from '../common/bytes.js';

export type AuthResult = { ok: true } | { ok: false; message: string };

const SCHEMES = new Set(['basic', 'token', 'bearer']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Gitea splits `Authorization` in two at a space, the scheme in any case; Basic decodes to `user:password`. */
export function checkAuthorization(header: string | undefined, otp: string | undefined): AuthResult {
  if (header === undefined || header.trim() === '') return { ok: false, message: 'token is required' };
  const invalid: AuthResult = { ok: false, message: 'invalid username, password or token' };
  const parts = header.split(' ');
  if (parts.length !== 2) return invalid;
  const [scheme = '', credentials = ''] = parts;
  if (!SCHEMES.has(scheme.toLowerCase()) || credentials === '') return invalid;
  if (scheme.toLowerCase() === 'basic') {
    if (credentials.length % 4 !== 0 || !BASE64.test(credentials)) return invalid;
    const colon = base64Text(credentials)?.indexOf(':') ?? -1;
    if (colon <= 0) return invalid;
  }
  // A one-time code is six digits; a wrong one is a failed sign-in, not a validation error.
  if (otp !== undefined && !/^[0-9]{6}$/.test(otp)) return invalid;
  return { ok: true };
}
