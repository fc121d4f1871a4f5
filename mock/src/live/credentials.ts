// Live mode's credentials, from the environment: GITEA_TOKEN, else GITEA_USERNAME and
// GITEA_PASSWORD (with GITEA_OTP for two-factor accounts). When a server refuses them, or asks
// for some and none were given, the line says which variables were sent, and which were set but
// not sent, so the one to fix is plain.
import type { Auth } from 'gitea-contract';
import { authorization } from 'gitea-contract/internal';

export interface Credentials {
  auth: Auth | undefined;
  /** The Authorization header to send, when there are credentials. */
  headers: Record<string, string>;
  /** Every value never to show: the header, the token or Basic credential, the password, the one-time code. */
  secrets: string[];
  /** The variables sent, as a line names them (`GITEA_TOKEN`), or undefined when none are. */
  sent: string | undefined;
  /** The variables set but not sent, and why, for the line (`GITEA_USERNAME and GITEA_PASSWORD, which are set too`). */
  unsent: string | undefined;
}

type Env = Record<string, string | undefined>;

export function readCredentials(env: Env): Credentials {
  const { GITEA_TOKEN: token, GITEA_USERNAME: username, GITEA_PASSWORD: password, GITEA_OTP: otp } = env;
  const basic = Boolean(username && password);
  const auth: Auth | undefined = token
    ? { token }
    : basic
      ? { username: username!, password: password!, ...(otp ? { otp } : {}) }
      : undefined;
  const headers: Record<string, string> = auth ? { Authorization: authorization(auth) } : {};
  const secrets = auth
    ? [
        headers.Authorization!,
        headers.Authorization!.slice(6),
        'token' in auth ? auth.token : auth.password,
        ...('otp' in auth && typeof auth.otp === 'string' ? [auth.otp] : []),
      ]
    : [];
  const basicNames = `GITEA_USERNAME${otp ? ', GITEA_PASSWORD and GITEA_OTP' : ' and GITEA_PASSWORD'}`;
  let unsent: string | undefined;
  if (token && (username || password))
    unsent = `${[username && 'GITEA_USERNAME', password && 'GITEA_PASSWORD'].filter(Boolean).join(' and ')}, set too but not sent: GITEA_TOKEN goes first`;
  else if (!auth && (username || password))
    unsent = `${username ? 'GITEA_USERNAME' : 'GITEA_PASSWORD'} is set without ${username ? 'GITEA_PASSWORD' : 'GITEA_USERNAME'}, so neither was sent`;
  return { auth, headers, secrets, sent: token ? 'GITEA_TOKEN' : auth ? basicNames : undefined, unsent };
}

/**
 * The line for a server that refused the credentials, or asked for some when none were given;
 * `answered` is what it answered (`adminGetAllOrgs answered 401 "…"`).
 */
export function refusedLine(baseUrl: string, credentials: Credentials, answered: string): string {
  const { sent, unsent } = credentials;
  if (!sent)
    return `${baseUrl} asks for credentials and none were given (${unsent ? `${unsent}; ` : ''}set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): ${answered}`;
  return `${baseUrl} refused the credentials in ${sent}${unsent ? ` (${unsent})` : ''}: ${answered}`;
}
