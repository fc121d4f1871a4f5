// Live mode's command line: `gitea-mock verify --base-url https://host/api/v1 [options]`, from the
// commands' table (common/options.ts). A wrong option is a usage error (exit 2), told before
// anything is sent; credentials are never options (the table's refusal points at the variables).
import { parseCommand, usage } from '../common/options.js';
import { usageError } from '../common/refusal.js';
import type { Target } from './checks.js';

export const USAGE = usage(
  'verify',
  'gitea-mock verify --base-url https://host/api/v1 [options]',
  `
Credentials come from the environment: GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD
(and GITEA_OTP for two-factor accounts).

Exit code: 0 every operation checked conforms; 1 at least one has a mismatch; 2 nothing was
checked (a wrong option, no Gitea API at the base URL, credentials refused, every operation
skipped, timed out or without an answer; with --allow-writes, no write checked; with
--fail-on-skip, any operation skipped).`,
);

export type Options = NonNullable<ReturnType<typeof parseOptions>>;

/** `--<name> owner/name` as Target's fields. */
function ownerRepo(value: string | undefined, name: string): { owner?: string; repo?: string } {
  const [owner, repo, extra] = value?.split('/') ?? [];
  if (value !== undefined && (!owner || !repo || extra !== undefined))
    throw usageError(`--${name} takes owner/name, not "${value}"`);
  return value === undefined ? {} : { owner: owner!, repo: repo! };
}

/** The options of `argv`; undefined when --help was asked for. */
export function parseOptions(argv: string[]) {
  const args = parseCommand('verify', argv);
  if (args.positionals.length > 0)
    throw usageError(
      'an argument that is no option was given (not repeated here, as it could be a credential): live mode takes options only, the base URL as --base-url, credentials from GITEA_TOKEN or GITEA_USERNAME and GITEA_PASSWORD',
    );
  if (args.help) return undefined;
  const baseUrl = args.text('base-url');
  if (!baseUrl) throw usageError('--base-url is required');
  const scratchRepo = args.text('scratch-repo');
  if (args.flag('allow-writes') && !scratchRepo) throw usageError('--allow-writes needs --scratch-repo owner/name');
  const pkg = args.text('package');
  const [owner, type, name, extra] = pkg?.split('/') ?? [];
  if (pkg !== undefined && (!owner || !type || !name || extra !== undefined))
    throw usageError(`--package takes owner/type/name, not "${pkg}"`);
  const ids = ['key-id', 'team-id', 'comment-id', 'issue', 'pull', 'milestone-id', 'hook-id', 'release-id'].flatMap(
    (option) => {
      const value = args.text(option);
      if (value !== undefined && !/^\d+$/.test(value)) throw usageError(`--${option} takes a number, not "${value}"`);
      // keyId, teamId … as Target names them.
      return value === undefined ? [] : [[option.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), Number(value)]];
    },
  );
  const [workflow, collaborator] = [args.text('workflow'), args.text('collaborator')];
  const readTarget: Target = {
    ...ownerRepo(args.text('repo'), 'repo'),
    ...Object.fromEntries(ids),
    ...(workflow ? { workflow } : {}),
    ...(pkg ? { package: { owner: owner!, type: type!, name: name! } } : {}),
    ...(collaborator ? { collaborator } : {}),
  };
  return {
    baseUrl,
    readTarget,
    writeTarget: { ...readTarget, ...ownerRepo(scratchRepo, 'scratch-repo') },
    allowWrites: args.flag('allow-writes'),
    /** Exit 2 when an operation the run was asked to check was skipped. */
    failOnSkip: args.flag('fail-on-skip'),
    scratchRepo,
    allowInsecureHttp: args.flag('allow-insecure-http'),
    report: args.file('report'),
    junit: args.file('junit'),
    timeoutMs: args.seconds('timeout'),
    requestTimeoutMs: args.seconds('request-timeout'),
    connectTimeoutMs: args.seconds('connect-timeout'),
  };
}
