// `gitea-mock verify --base-url https://host/api/v1`: live mode, checking a real server's answers.
import { writeFileSync } from 'node:fs';
import { createGiteaClient } from 'gitea-contract';
import { type Io, logger, parseCommand, usage } from '../common/options.js';
import { redact } from '../common/redaction.js';
import { usageError } from '../common/refusal.js';
import { describeViolation, mismatches } from '../contract/conformance.js';
import { listOperations } from '../contract/document.js';
import { readDocumentFile } from '../contract/document-file.js';
import { kindOf } from '../contract/violation-kind.js';
import { type Check, checks, neverRun, type Target } from './checks.js';
import { junitXml, type Outcome, type Problem, type RunRecord, type SkipKind } from './junit.js';
import {
  type CapturedAnswer,
  createBudget,
  createCapture,
  failureCause,
  lookUp,
  probeServer,
  readCredentials,
  refusalIn,
  refusedLine,
  statusWithMessage,
  TOO_LARGE,
} from './wire.js';

const USAGE = usage(
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

/** `--<name> owner/name` as Target's fields. */
function ownerRepo(value: string | undefined, name: string): { owner?: string; repo?: string } {
  const [owner, repo, extra] = value?.split('/') ?? [];
  if (value !== undefined && (!owner || !repo || extra !== undefined))
    throw usageError(`--${name} takes owner/name, not "${value}"`);
  return value === undefined ? {} : { owner: owner!, repo: repo! };
}

/** The options of `argv`, undefined for --help; a wrong one is a usage error (exit 2), told before anything is sent. */
function parseOptions(argv: string[]) {
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

/** Why an operation was not checked, and what the summary says after each kind's count, in its order. */
const REASONS: [SkipKind, string][] = [
  ['scope', 'refused for want of a token scope'],
  ['timeout', 'ran out of time'],
  ['network', 'got no answer: the connection failed'],
  ['too-large', 'answered a body too large to check'],
  ['input', 'lacked an id or a repository'],
  ['stopped', 'not run: the run ended first'],
  ['writes', 'change data: not run without --allow-writes --scratch-repo owner/name'],
  ['never', 'never run by live mode: they change data outside a scratch repository'],
];
/** Skips that leave unchecked an operation the run was asked to check: what `--fail-on-skip` fails. */
const UNCHECKED: readonly SkipKind[] = ['scope', 'timeout', 'network', 'too-large', 'input'];

type Skipped = Outcome & { checked: false };
const byId = (a: Outcome, b: Outcome): number => a.operationId.localeCompare(b.operationId);

/** For each kind of skip among `outcomes`, in REASONS' order, `describe` of its count, reason and outcomes. */
const byReason = (outcomes: readonly Skipped[], describe: (kind: SkipKind, reason: string, of: Skipped[]) => string) =>
  REASONS.flatMap(([kind, reason]) => {
    const of = outcomes.filter((outcome) => outcome.kind === kind);
    return of.length === 0 ? [] : [describe(kind, reason, of)];
  }).join('; ');

/** The JSON report of `run`, redacted (as text: the secrets are found JSON-escaped too): per operation the proxy's counts and what live mode knows besides. */
function jsonReport(run: RunRecord, skipped: Skipped[], secrets: readonly string[]): string {
  const operations = run.outcomes
    .filter((outcome) => outcome.checked)
    .sort(byId)
    .map(({ operationId, status, problems, notChecked }) => {
      const violations: Record<string, number> = {};
      for (const { kind, count = 1 } of problems) violations[kind] = (violations[kind] ?? 0) + count;
      const mismatches = problems.map(({ line }) => line);
      const stats = { exchanges: 1, withViolations: problems.length > 0 ? 1 : 0, violations, status: status ?? null };
      return [operationId, { ...stats, mismatches, ...(notChecked ? { notChecked } : {}) }];
    });
  const report = {
    baseUrl: run.baseUrl,
    server: run.server ?? null,
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    exitCode: run.exitCode,
    ...(run.stopped ? { stopped: run.stopped } : {}),
    operations: Object.fromEntries(operations),
    skipped: Object.fromEntries(
      skipped.sort(byId).map(({ operationId, kind, cause }) => [operationId, { kind, cause }]),
    ),
  };
  return `${redact(JSON.stringify(report, null, 2), secrets)}\n`;
}

/** Live mode with the arguments after `verify`; resolves with the exit code. */
export async function verify(args: readonly string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  // The credentials first: every line printed and every file written from here on is redacted of them.
  const credentials = readCredentials(env);
  const { secrets } = credentials;
  // The report's lines are held back until an answer shows the credentials work, so a refused run prints one line on stderr only.
  let held: string[] | undefined = [];
  const say = (line: string): void => {
    const text = `${redact(line, secrets)}\n`;
    if (held) held.push(text);
    else io.stdout(text);
  };
  const release = (): void => {
    if (held) io.stdout(held.join(''));
    held = undefined;
  };
  /** Drops the lines held. */
  const warn = (message: string, after = ''): void => {
    held = undefined;
    io.stderr(redact(`gitea-mock verify: ${message}\n${after}`, secrets));
  };
  const redacting = { stdout: io.stdout, stderr: (text: string) => io.stderr(redact(text, secrets)) };
  const parsed = await logger(redacting, 'gitea-mock verify').options(USAGE, () => parseOptions([...args]));
  if (typeof parsed === 'number') return parsed;
  const options = parsed;
  const { baseUrl } = options;
  const now = new Date();
  const record: RunRecord = { baseUrl, started: now, finished: now, exitCode: 2, outcomes: [] };

  /** With `stopped`, the one line on stderr saying why nothing (more) could be checked, the rest not run; the files. */
  function finish(exitCode: number, stopped?: string): number {
    if (stopped) warn(stopped);
    else release();
    const taken = new Set(record.outcomes.map(({ operationId }) => operationId));
    const cause = `not run: ${stopped ?? 'the run ended'}`;
    for (const operationId of [...checks.map((check) => check.operationId), ...neverRun])
      if (!taken.has(operationId)) record.outcomes.push({ operationId, checked: false, kind: 'stopped', cause });
    Object.assign(record, { exitCode, stopped, finished: new Date() });
    const skipped = record.outcomes.filter((outcome): outcome is Skipped => !outcome.checked);
    try {
      if (options.report) writeFileSync(options.report, jsonReport(record, skipped, secrets));
      if (options.junit) writeFileSync(options.junit, junitXml(record, secrets));
    } catch (error) {
      warn(`cannot write the results: ${error instanceof Error ? error.message : String(error)}`);
      return 2;
    }
    return exitCode;
  }

  const budget = createBudget(options.timeoutMs, options.requestTimeoutMs);
  const capture = createCapture();
  /** The signal of the request under way: its --request-timeout, within the run's --timeout. */
  let signal: AbortSignal | undefined;
  let client: ReturnType<typeof createGiteaClient>;
  try {
    client = createGiteaClient({
      baseUrl,
      ...(credentials.auth ? { auth: credentials.auth } : {}),
      fetch: capture.fetch,
      retry: 0,
      allowInsecureHttp: options.allowInsecureHttp,
    });
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error), `\n${USAGE}`);
    return 2;
  }
  // Each call hands a redirect back unfollowed (the 3xx is the answer, checked against the document,
  // and nothing goes where it points) and carries the signal of its time limit.
  client = new Proxy(client, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' && typeof name === 'string' && /^[A-Z]+$/.test(name)
        ? (path: string, init?: object) => value(path, { ...init, redirect: 'manual', signal })
        : value;
    },
  });
  const connectFirst = options.timeoutMs >= options.connectTimeoutMs;
  const probe = await probeServer(
    baseUrl,
    credentials,
    Math.min(options.connectTimeoutMs, options.timeoutMs),
    connectFirst ? '--connect-timeout' : '--timeout',
  );
  if (!probe.ok) return finish(2, probe.problem);
  record.server = probe.server;
  // The document and Ajv are loaded only now: a server that is not there is told in a blink.
  const doc = readDocumentFile().document;
  const { createSchemaValidator } = await import('../contract/schema.js');
  const schemas = createSchemaValidator(doc);
  const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
  /** What an answer breaks; of a body too large to read whole, its status and headers only. */
  const judge = (operationId: string, answer: CapturedAnswer): Problem[] =>
    mismatches(doc, schemas, operations.get(operationId)!, answer, {
      body: !answer.tooLarge,
      redact: (text) => redact(text, secrets),
    }).map((violation) => {
      const line = describeViolation(violation);
      return { kind: kindOf(`response ${line}`), line, ...(violation.count ? { count: violation.count } : {}) };
    });

  /** Resolves with the line that stops the run, if it must stop. */
  async function runCheck(check: Check): Promise<string | undefined> {
    const { operationId } = check;
    const label = operationId.padEnd(34);
    const skip = (kind: SkipKind, cause: string, verb = 'skipped'): undefined => {
      record.outcomes.push({ operationId, checked: false, kind, cause });
      say(`- ${label} ${verb}: ${cause}`);
      return undefined;
    };
    if (check.writes && !options.allowWrites)
      return skip('writes', 'it writes (use --allow-writes --scratch-repo owner/name)', 'not run');
    const spent = budget.spent();
    if (spent) return skip('timeout', spent, 'not run');
    const began = performance.now();
    const call = await check.prepare({
      target: check.writes ? options.writeTarget : options.readTarget,
      lookUp: (path) => lookUp(baseUrl, path, credentials.headers, budget, secrets),
      keepSecret: (value) => void secrets.push(value),
    });
    if (typeof call !== 'function') return skip(call.kind, call.skip);
    const timer = budget.request();
    if (!timer) return skip('timeout', budget.spent()!, 'not run');
    capture.forget();
    signal = timer.signal;
    let failure: unknown;
    try {
      await call(client);
    } catch (error) {
      failure = error;
    } finally {
      timer.done();
    }
    const answer = capture.last();
    const timedOut = timer.timedOut();
    if (!answer && timedOut) return skip('timeout', `timed out: ${timedOut}`);
    // No answer at all (refused, reset, closed): nothing to judge, so no mismatch.
    if (!answer)
      return skip(
        'network',
        failure === undefined ? 'no answer was received' : `the request failed: ${failureCause(failure)}`,
      );
    const answered = (): string => `answered ${statusWithMessage(answer.status, answer.body, secrets)}`;
    const refusal = refusalIn(answer);
    if (refusal === 'everywhere') {
      const cause = `the credentials were refused: ${answered()}`;
      record.outcomes.push({ operationId, checked: false, kind: 'stopped', cause });
      return refusedLine(baseUrl, credentials, `${operationId} ${answered()}`);
    }
    if (refusal === 'operation') return skip('scope', `the token lacks a scope: ${answered()}`);
    release();
    let problems: Problem[];
    try {
      problems = judge(operationId, answer);
    } catch (error) {
      // Live mode's own failure, not the server's: the run stops with it, its files written.
      const cause = error instanceof Error ? error.message : String(error);
      return `the check of ${operationId}'s answer failed: ${cause}; this is a bug in gitea-mock`;
    }
    const { status } = answer;
    // Conforming, yet not checked: a body too large to read; a 404, which wrote or read nothing
    // (a run whose writes all went nowhere, or a wrong id, must not pass for one that checked them).
    if (problems.length === 0 && answer.tooLarge)
      return skip(
        'too-large',
        `answered ${status} with a ${TOO_LARGE.replace(/^body is/, 'body')} (its status and declared headers conform)`,
      );
    if (problems.length === 0 && status === 404)
      return skip(
        'input',
        check.writes
          ? `nothing was written: ${answered()} (the scratch repository ${options.scratchRepo}, or what this write names in it, is not there)`
          : `nothing was read: ${answered()} (what this read names is not there: check the ids and the repository given)`,
      );
    const ms = performance.now() - began;
    const notChecked = answer.tooLarge ? { notChecked: TOO_LARGE } : {};
    record.outcomes.push({ operationId, checked: true, status, problems, ms, ...notChecked });
    if (problems.length === 0) return void say(`✓ ${label} ${status} conforms`);
    const count = problems.reduce((sum, problem) => sum + (problem.count ?? 1), 0);
    say(`✗ ${label} ${status} ${count} mismatch${count > 1 ? 'es' : ''}`);
    for (const { line } of problems) say(`    ${line}`);
    if (answer.tooLarge) say(`    (${TOO_LARGE})`);
    return undefined;
  }

  say(
    `live contract check of ${baseUrl} (${options.allowWrites ? `writes allowed in ${options.scratchRepo}` : 'read-only'})`,
  );
  // The version comes from the server, which may echo a credential there too.
  say(`server: ${probe.server}`);
  for (const check of checks) {
    const stopped = await runCheck(check);
    if (stopped) return finish(2, stopped);
  }

  // After the last check: the operations never run, the summary, and the exit code it comes to.
  release();
  say(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
  const cause = 'never run by live mode: it changes data outside a scratch repository';
  for (const operationId of neverRun) record.outcomes.push({ operationId, checked: false, kind: 'never', cause });
  const checked = record.outcomes.filter((outcome) => outcome.checked);
  const failed = checked.filter((outcome) => outcome.problems.length > 0).length;
  const skipped = record.outcomes.filter((outcome): outcome is Skipped => !outcome.checked);
  say(`${checked.length} of ${record.outcomes.length} operations checked, ${failed} with mismatches`);
  // Those the run was asked to check are named; writes and those never run are listed above.
  if (skipped.length > 0) {
    const parts = byReason(skipped, (kind, reason, of) =>
      UNCHECKED.includes(kind)
        ? `${of.length} ${reason} (${of.map(({ operationId }) => operationId).join(', ')})`
        : `${of.length} ${reason}`,
    );
    say(`${skipped.length} not checked: ${parts}`);
  }
  const unchecked = skipped.filter((outcome) => UNCHECKED.includes(outcome.kind));
  /** `what: ` and, per kind of skip among the operations `among`, how many and the first with its cause. */
  const nothing = (what: string, among = (_: string) => true): string => {
    const of = unchecked.filter(({ operationId }) => among(operationId));
    return `${what}: ${byReason(of, (_, reason, each) => `${each.length} ${reason} (the first, ${each[0]!.operationId}: ${each[0]!.cause})`)}`;
  };
  if (checked.length === 0) return finish(2, nothing('no operation could be checked'));
  // With --allow-writes, a run that wrote nothing cannot pass.
  const writes = new Set(checks.filter((check) => check.writes).map((check) => check.operationId));
  if (failed === 0 && options.allowWrites && !checked.some(({ operationId }) => writes.has(operationId)))
    return finish(
      2,
      nothing(`no write could be checked in ${options.scratchRepo}`, (id) => writes.has(id)),
    );
  const many = unchecked.length;
  if (failed === 0 && options.failOnSkip && many > 0)
    return finish(2, nothing(`${many} operation${many === 1 ? '' : 's'} could not be checked (--fail-on-skip)`));
  return finish(failed > 0 ? 1 : 0);
}
