// The names Gitea's handlers refuse, in its words. The document's patterns say which names these
// are, so the request check finds them in every mode; this file answers them as the server does
// (its status and message, where the check alone would say `422` and the pattern), and the
// property test in contract-tests/name-rules.test.ts holds the two to each other.
import type { IHttpRequest } from '@stoplight/prism-http';
import { pathParams, type MockOperation } from './operations.js';
import type { Diagnostic } from './validation.js';

/** Names Gitea keeps for its own paths and users (`reservedUsernames`, models/user/user.go), compared in lower case. */
const RESERVED_USERNAMES = new Set([
  '.',
  '..',
  '.well-known',
  'api',
  'metrics',
  'v2',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'repo-avatars',
  'captcha',
  'login',
  'org',
  'repo',
  'user',
  'explore',
  'issues',
  'pulls',
  'milestones',
  'notifications',
  'favicon.ico',
  'manifest.json',
  'robots.txt',
  'sitemap.xml',
  'ssh_info',
  'swagger.v1.json',
  'openapi3.v1.json',
  'ghost',
  'gitea-actions',
]);

/** Endings of names that the paths of a user's keys, feeds and avatar take (`reservedUserPatterns`). */
const RESERVED_USERNAME_ENDINGS = ['.keys', '.gpg', '.rss', '.atom', '.png'];

/** Why Gitea refuses a new user name (`IsUsableUsername`), in its words; undefined for a usable one. */
export function usernameProblem(name: string): string | undefined {
  // IsValidUsername (modules/validation/helpers.go): Go's `\w` and `\d` are ASCII, as they are here.
  if (!/^[0-9A-Za-z][-.\w]*$/.test(name) || /[-._]{2,}|[-._]$/.test(name))
    return `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`;
  const lower = name.toLowerCase();
  if (RESERVED_USERNAMES.has(lower)) return `name is reserved [name: ${lower}]`;
  const ending = RESERVED_USERNAME_ENDINGS.find((candidate) => lower.endsWith(candidate));
  return ending === undefined ? undefined : `name pattern is not allowed [pattern: *${ending}]`;
}

/** Why Gitea refuses an Actions secret's name (`ValidateName`, services/secrets/validation.go); undefined for a valid one. */
export function secretNameProblem(name: string): string | undefined {
  // Go's `(?i)` folds case as Unicode's simple folding does (`ſ` is an `s`), as the `u` flag does.
  if (!/^[A-Z_][A-Z0-9_]*$/iu.test(name) || /^GIT(EA|HUB)_/iu.test(name) || /^CI$/iu.test(name))
    return 'invalid variable or secret name';
  return undefined;
}

/** Where an operation's name is, and how Gitea's handler answers one it refuses. */
interface NameRule {
  at: readonly [where: 'path' | 'body', name: string];
  status: number;
  problem(name: string): string | undefined;
}

const NAMED: Record<string, NameRule> = {
  updateUserSecret: { at: ['path', 'secretname'], status: 400, problem: secretNameProblem },
  adminRenameUser: { at: ['body', 'new_username'], status: 422, problem: usernameProblem },
};

/**
 * Gitea's answer to a request whose only violations are of its operation's name, or undefined:
 * the binding's `422` goes first when anything else breaks the document, as on the server, where
 * the handler checks the name after the body is bound.
 */
export function nameRefusal(
  op: MockOperation,
  request: IHttpRequest,
  violations: readonly Diagnostic[],
): { status: number; message: string } | undefined {
  const rule = NAMED[op.operationId];
  if (!rule) return undefined;
  const [where, name] = rule.at;
  if (!violations.every((violation) => violation.path?.[0] === where && violation.path[1] === name)) return undefined;
  const value =
    where === 'path'
      ? pathParams(op.path, request.url.path)[name]
      : (request.body as Record<string, unknown> | undefined)?.[name];
  const message = typeof value === 'string' ? rule.problem(value) : undefined;
  return message === undefined ? undefined : { status: rule.status, message };
}
