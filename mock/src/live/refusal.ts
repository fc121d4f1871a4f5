// An answer that refuses the credentials says nothing of the operation: live mode does not count
// it as checked. Gitea answers 401 only for missing or wrong credentials, on every route alike,
// since it authenticates before routing (routers/api/v1/api.go `apiAuth`, `reqToken`); a few 403s
// refuse the account the same way (`verifyAuthWithOptions`). Those end the run. A token that lacks
// the scope one operation needs gets a 403 for that operation only (`tokenRequiresScopes`,
// `checkTokenPublicOnly`): that operation is skipped, the others still run.
import type { Answer } from '../contract/conformance.js';
import { serverMessage } from './wire.js';

/** `everywhere`: every operation would be refused alike; `operation`: this one only (a scope). */
export type Refusal = 'everywhere' | 'operation';

/** The 403 messages of a token that lacks a scope, or is limited to public resources. */
const SCOPE = /^(token does not have at least one of required scope|token scope is limited to public )/;
/** The 403 messages of an account that may not use the API at all. */
const ACCOUNT =
  /^(This account is not activated\.|This account is prohibited from signing in|You must change your password\.|Only signed in user is allowed to call APIs\.)/;

/** How `answer` refuses the credentials, or undefined when it is an answer to judge. */
export function refusalIn(answer: Answer): Refusal | undefined {
  if (answer.status === 401) return 'everywhere';
  if (answer.status !== 403) return undefined;
  const message = serverMessage(answer.body);
  if (ACCOUNT.test(message)) return 'everywhere';
  if (SCOPE.test(message)) return 'operation';
  return undefined;
}
