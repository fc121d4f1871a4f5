// The mock has no users, so any well-formed credential is accepted.
import { base64Text } from '../common/bytes.js';

export type AuthResult = { ok: true } | { ok: false; message: string };

const SCHEMES = new Set(['basic', 'token', 'bearer']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const INVALID: AuthResult = { ok: false, message: 'invalid username, password or token' };

/** The one-time code sent: on Forgejo its own header, where not empty, before Gitea's (services/auth/basic.go @ v11.0/forgejo, line 159). */
export function oneTimeCode(header: (name: string) => string | undefined, forgejo: boolean): string | undefined {
  return (forgejo && header('x-forgejo-otp')) || header('x-gitea-otp');
}

/** Gitea splits `Authorization` in two at a space, the scheme in any case; Basic decodes to `user:password`. */
export function checkAuthorization(header: string | undefined, otp: string | undefined): AuthResult {
  if (header === undefined || header.trim() === '') return { ok: false, message: 'token is required' };
  const [scheme = '', credentials = '', ...more] = header.split(' ');
  const kind = scheme.toLowerCase();
  if (more.length > 0 || !SCHEMES.has(kind) || credentials === '') return INVALID;
  if (kind === 'basic') {
    const decoded = credentials.length % 4 === 0 && BASE64.test(credentials) ? base64Text(credentials) : undefined;
    if ((decoded?.indexOf(':') ?? -1) <= 0) return INVALID;
  }
  // A wrong one-time code is a failed sign-in, not a validation error.
  if (otp !== undefined && !/^[0-9]{6}$/.test(otp)) return INVALID;
  return { ok: true };
}
