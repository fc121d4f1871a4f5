// Live mode's command line: `gitea-mock verify --base-url https://host/api/v1 [options]`. A wrong
// option is a usage error (exit 2), told before anything is sent. Credentials are never options:
// an option that looks like one points at the environment variables instead.
import { parseArgs } from 'node:util';
import { outputFileProblem } from '../common/output-file.js';
import { type Refusal, usageError } from '../common/refusal.js';
import type { Target } from './checks.js';

export const USAGE = `Usage: gitea-mock verify --base-url https://host/api/v1 [options]

Credentials come from the environment: GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD
(and GITEA_OTP for two-factor accounts).

  --base-url <url>          the API root, ending in /api/v1 (required)
  --repo <owner/name>       a repository to read from (deploy key, workflow, comment)
  --key-id, --team-id, --comment-id <n>, --workflow <file.yml>, --package <owner/type/name>
                            what the read checks use; those not given are looked up where
                            the server lists them
  --allow-writes            also run operations that change data, inside --scratch-repo only
  --scratch-repo <owner/name>  the repository writes may touch (required with --allow-writes)
  --collaborator <user>     a user to add to the scratch repository with read access
  --issue, --pull <number>, --milestone-id, --hook-id, --release-id <n>
                            what the writes use in the scratch repository; those not given
                            are looked up where the server lists them
  --fail-on-skip            exit 2 unless every operation it was asked to check was checked
                            (not the writes without --allow-writes, nor those never run)
  --report <file>           write the results as JSON (per operation: exchanges, violations
                            by kind, mismatches; skipped operations with their cause)
  --junit <file>            write the results as JUnit XML, one test case per operation
  --timeout <s>             seconds the whole run may take (default 120)
  --request-timeout <s>     seconds one request may take, within --timeout (default 30)
  --connect-timeout <s>     seconds to wait for the server's answer to GET /version (default 10)
  --allow-insecure-http     send credentials over plain http to a non-local host
  --help

Exit code: 0 every operation checked conforms; 1 at least one has a mismatch; 2 nothing was
checked (a wrong option, no Gitea API at the base URL, credentials refused, every operation
skipped, timed out or without an answer; with --allow-writes, no write checked; with
--fail-on-skip, any operation skipped).
`;

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

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw usageError(`${flag} takes a number, not "${value}"`);
  return Number(value);
}

function seconds(value: string, flag: string): number {
  const parsed = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || parsed <= 0)
    throw usageError(`${flag} takes a number of seconds above 0, not "${value}"`);
  return parsed * 1000;
}

/** A file to write at the end: its folder must exist and be writable now, not after the run. */
function outputFile(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const problem = outputFileProblem(value);
  if (problem) throw usageError(`${flag} ${value}: ${problem}`);
  return value;
}

/** An option name that reads as a credential (`--token`, `--password`, `--user` …), which live mode never takes. */
const CREDENTIAL_OPTION = /token|pass|secret|user|login|otp|auth|cred|api-?key/i;

/**
 * The usage error for what parseArgs refused. An argument that is no option is not quoted, as it
 * may be a token given where an option belongs.
 */
function refusal(error: unknown): Refusal {
  const { code, message } = error as { code?: string; message?: string };
  const option = /^Unknown option '([^']+)'/.exec(message ?? '')?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option && CREDENTIAL_OPTION.test(option))
    return usageError(
      `${option} is not an option: credentials come from the environment only, never the command line (where process lists and CI logs show them): set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD (and GITEA_OTP for two-factor accounts)`,
    );
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return usageError(
      'an argument that is no option was given (not repeated here, as it could be a credential): live mode takes options only, the base URL as --base-url, credentials from GITEA_TOKEN or GITEA_USERNAME and GITEA_PASSWORD',
    );
  return usageError(message ?? String(error));
}

/** The options of `argv`; undefined when --help was asked for. */
export function parseOptions(argv: string[]): Options | undefined {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        'base-url': { type: 'string' },
        repo: { type: 'string' },
        'key-id': { type: 'string' },
        'team-id': { type: 'string' },
        'comment-id': { type: 'string' },
        workflow: { type: 'string' },
        package: { type: 'string' },
        'allow-writes': { type: 'boolean', default: false },
        'fail-on-skip': { type: 'boolean', default: false },
        'scratch-repo': { type: 'string' },
        collaborator: { type: 'string' },
        issue: { type: 'string' },
        pull: { type: 'string' },
        'milestone-id': { type: 'string' },
        'hook-id': { type: 'string' },
        'release-id': { type: 'string' },
        report: { type: 'string' },
        junit: { type: 'string' },
        timeout: { type: 'string', default: '120' },
        'request-timeout': { type: 'string', default: '30' },
        'connect-timeout': { type: 'string', default: '10' },
        'allow-insecure-http': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    throw refusal(error);
  }
  if (values.help) return undefined;
  const baseUrl = values['base-url'];
  if (!baseUrl) throw usageError('--base-url is required');
  if (values['allow-writes'] && !values['scratch-repo'])
    throw usageError('--allow-writes needs --scratch-repo owner/name');
  const packageParts = values.package?.split('/');
  if (packageParts && (packageParts.length !== 3 || packageParts.some((part) => part === '')))
    throw usageError(`--package takes owner/type/name, not "${values.package}"`);
  const ids = {
    keyId: integer(values['key-id'], '--key-id'),
    teamId: integer(values['team-id'], '--team-id'),
    commentId: integer(values['comment-id'], '--comment-id'),
    issue: integer(values.issue, '--issue'),
    pull: integer(values.pull, '--pull'),
    milestoneId: integer(values['milestone-id'], '--milestone-id'),
    hookId: integer(values['hook-id'], '--hook-id'),
    releaseId: integer(values['release-id'], '--release-id'),
  };
  const readTarget: Target = {
    ...ownerRepo(values.repo, '--repo'),
    ...Object.fromEntries(Object.entries(ids).filter(([, id]) => id !== undefined)),
    ...(values.workflow ? { workflow: values.workflow } : {}),
    ...(packageParts ? { package: { owner: packageParts[0]!, type: packageParts[1]!, name: packageParts[2]! } } : {}),
    ...(values.collaborator ? { collaborator: values.collaborator } : {}),
  };
  return {
    baseUrl,
    readTarget,
    writeTarget: { ...readTarget, ...ownerRepo(values['scratch-repo'], '--scratch-repo') },
    allowWrites: values['allow-writes'],
    failOnSkip: values['fail-on-skip'],
    scratchRepo: values['scratch-repo'],
    allowInsecureHttp: values['allow-insecure-http'],
    report: outputFile(values.report, '--report'),
    junit: outputFile(values.junit, '--junit'),
    timeoutMs: seconds(values.timeout, '--timeout'),
    requestTimeoutMs: seconds(values['request-timeout'], '--request-timeout'),
    connectTimeoutMs: seconds(values['connect-timeout'], '--connect-timeout'),
  };
}
