// Live mode's command line: `gitea-mock verify --base-url https://host/api/v1 [options]`, from the
// commands' table (common/options.ts). A wrong option is a usage error (exit 2), told before
// anything is sent; credentials are never options (the table's refusal points at the variables).
import { outputFile, parseCommand, seconds, usage } from '../common/options.js';
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

export interface Options {
  baseUrl: string;
  readTarget: Target;
  writeTarget: Target;
  allowWrites: boolean;
  /** Exit 2 when an operation the run was asked to check was skipped. */
  failOnSkip: boolean;
  scratchRepo: string | undefined;
  allowInsecureHttp: boolean;
  report: string | undefined;
  junit: string | undefined;
  timeoutMs: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
}

function ownerRepo(value: string | undefined, flag: string): { owner?: string; repo?: string } {
  if (value === undefined) return {};
  const [owner, repo, extra] = value.split('/');
  if (!owner || !repo || extra !== undefined) throw usageError(`${flag} takes owner/name, not "${value}"`);
  return { owner, repo };
}

/** The options of `argv`; undefined when --help was asked for. */
export function parseOptions(argv: string[]): Options | undefined {
  const { values, positionals } = parseCommand('verify', argv);
  const text = (name: string) => values[name] as string | undefined;
  if (positionals.length > 0)
    throw usageError(
      'an argument that is no option was given (not repeated here, as it could be a credential): live mode takes options only, the base URL as --base-url, credentials from GITEA_TOKEN or GITEA_USERNAME and GITEA_PASSWORD',
    );
  if (values.help) return undefined;
  const baseUrl = text('base-url');
  if (!baseUrl) throw usageError('--base-url is required');
  if (values['allow-writes'] && !values['scratch-repo'])
    throw usageError('--allow-writes needs --scratch-repo owner/name');
  const packageParts = text('package')?.split('/');
  if (packageParts && (packageParts.length !== 3 || packageParts.some((part) => part === '')))
    throw usageError(`--package takes owner/type/name, not "${values.package}"`);
  const ids = ['key-id', 'team-id', 'comment-id', 'issue', 'pull', 'milestone-id', 'hook-id', 'release-id'].flatMap(
    (name) => {
      const value = text(name);
      if (value !== undefined && !/^\d+$/.test(value)) throw usageError(`--${name} takes a number, not "${value}"`);
      // keyId, teamId … as Target names them.
      return value === undefined ? [] : [[name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), Number(value)]];
    },
  );
  const readTarget: Target = {
    ...ownerRepo(text('repo'), '--repo'),
    ...Object.fromEntries(ids),
    ...(values.workflow ? { workflow: text('workflow') } : {}),
    ...(packageParts ? { package: { owner: packageParts[0]!, type: packageParts[1]!, name: packageParts[2]! } } : {}),
    ...(values.collaborator ? { collaborator: text('collaborator') } : {}),
  };
  return {
    baseUrl,
    readTarget,
    writeTarget: { ...readTarget, ...ownerRepo(text('scratch-repo'), '--scratch-repo') },
    allowWrites: values['allow-writes'] === true,
    failOnSkip: values['fail-on-skip'] === true,
    scratchRepo: text('scratch-repo'),
    allowInsecureHttp: values['allow-insecure-http'] === true,
    report: outputFile(values, 'report'),
    junit: outputFile(values, 'junit'),
    timeoutMs: seconds(values, 'timeout'),
    requestTimeoutMs: seconds(values, 'request-timeout'),
    connectTimeoutMs: seconds(values, 'connect-timeout'),
  };
}
