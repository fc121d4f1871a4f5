// `gitea-mock verify --base-url https://host/api/v1`: checks that a Gitea API answers there, runs
// checks.ts's operations against it, validates each answer against openapi.yaml and prints the
// mismatches and why the others were not checked. Exit 1 on a mismatch; 2 when it could check
// nothing (wrong options, no Gitea API, credentials refused, every operation skipped, timed out or
// unanswered), or skipped any with --fail-on-skip: a request without an answer is never a mismatch.
// Every line and file is redacted of the credentials, even echoed; at most 10 MB of an answer is
// read, a redirect is judged, not followed, and the run keeps within --timeout.
import { writeFileSync } from 'node:fs';
import { type Auth, createGiteaClient, type GiteaClient } from 'gitea-contract';
import { redact } from '../common/redaction.js';
import { Refusal } from '../common/refusal.js';
import { describeViolation, mismatches } from '../contract/conformance.js';
import { listOperations } from '../contract/document.js';
import { readDocumentFile } from '../contract/document-file.js';
import { kindOf } from '../contract/violation-kind.js';
import { type Check, checks, neverRun } from './checks.js';
import { type Credentials, readCredentials, refusedLine } from './credentials.js';
import { junitXml } from './junit.js';
import { type Options, parseOptions, USAGE } from './options.js';
import { probeServer } from './reachability.js';
import {
  jsonReport,
  type Problem,
  problemCount,
  type RunRecord,
  type SkipKind,
  summaryLines,
  uncheckedOf,
  whyUnchecked,
} from './results.js';
import {
  type Budget,
  type Capture,
  createBudget,
  type CapturedAnswer,
  createCapture,
  failureCause,
  lookUp,
  refusalIn,
  statusWithMessage,
  TOO_LARGE,
} from './wire.js';

/** Where live mode writes its report lines (stdout) and its one-line refusals and usage (stderr). */
export interface VerifyOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The report's lines, redacted; held back until an answer shows the credentials work, so a refused run prints one line on stderr only. */
interface Output {
  say(line: string): void;
  release(): void;
  /** Drops the lines held and prints `gitea-mock verify: <message>` on stderr. */
  warn(message: string, after?: string): void;
}

/** What each step of a run reads, and the record it fills. */
interface Run {
  options: Options;
  credentials: Credentials;
  out: Output;
  record: RunRecord;
}

interface Live extends Run {
  budget: Budget;
  capture: Capture;
  client: GiteaClient;
  /** The signal of the request under way: its --request-timeout, within the run's --timeout. */
  signal: AbortSignal | undefined;
  judge: (operationId: string, answer: CapturedAnswer) => Problem[];
}

/**
 * Runs live mode with the arguments after `verify` and the environment it reads the credentials
 * from; resolves with the exit code. The `gitea-mock verify` command exits with it.
 */
export async function verify(args: readonly string[], env: NodeJS.ProcessEnv, io: VerifyOutput): Promise<number> {
  // The credentials first: every line printed and every file written from here on is redacted of them.
  const credentials = readCredentials(env);
  const out = createOutput(io, credentials.secrets);
  /** A usage error: its line and the usage, and exit status 2. */
  function fail(message: string): number {
    out.warn(message, `\n${USAGE}`);
    return 2;
  }

  let parsed: Options | undefined;
  try {
    parsed = parseOptions([...args]);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return fail(error.message);
  }
  if (!parsed) {
    io.stdout(USAGE);
    return 0;
  }
  const options = parsed;
  const { baseUrl } = options;
  const now = new Date();
  const record: RunRecord = { baseUrl, started: now, finished: now, exitCode: 2, outcomes: [] };
  const run: Run = { options, credentials, out, record };

  const budget = createBudget(options.timeoutMs, options.requestTimeoutMs);
  const capture = createCapture();
  let client: GiteaClient;
  try {
    client = liveClient(options, credentials.auth, capture, () => live.signal);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const probe = await probeServer(baseUrl, {
    headers: credentials.headers,
    timeoutMs: Math.min(options.connectTimeoutMs, options.timeoutMs),
    timeoutFlag: options.timeoutMs < options.connectTimeoutMs ? '--timeout' : '--connect-timeout',
    secrets: credentials.secrets,
    refused: (answered) => refusedLine(baseUrl, credentials, answered),
  });
  if (!probe.ok) return finish(run, 2, probe.problem);
  record.server = probe.server;
  const judge = await createJudge(credentials.secrets);
  const live: Live = { ...run, budget, capture, client, signal: undefined, judge };
  out.say(
    `live contract check of ${baseUrl} (${options.allowWrites ? `writes allowed in ${options.scratchRepo}` : 'read-only'})`,
  );
  // The version comes from the server, which may echo a credential there too.
  out.say(`server: ${probe.server}`);
  for (const check of checks) {
    const stopped = await runCheck(live, check);
    if (stopped) return finish(run, 2, stopped);
  }
  return conclude(run);
}

function createOutput(io: VerifyOutput, secrets: readonly string[]): Output {
  let held: string[] | undefined = [];
  return {
    say(line) {
      const text = `${redact(line, secrets)}\n`;
      if (held) held.push(text);
      else io.stdout(text);
    },
    release() {
      if (held) io.stdout(held.join(''));
      held = undefined;
    },
    warn(message, after = '') {
      held = undefined;
      io.stderr(redact(`gitea-mock verify: ${message}\n${after}`, secrets));
    },
  };
}

/**
 * The client the checks call. Each call hands a redirect back unfollowed (the 3xx is the answer,
 * checked against the document, and nothing goes where it points) and carries the signal of its
 * time limit.
 */
function liveClient(
  options: Options,
  auth: Auth | undefined,
  capture: Capture,
  signal: () => AbortSignal | undefined,
): GiteaClient {
  const client = createGiteaClient({
    baseUrl: options.baseUrl,
    ...(auth ? { auth } : {}),
    fetch: capture.fetch,
    retry: 0,
    allowInsecureHttp: options.allowInsecureHttp,
  });
  return new Proxy(client, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' && typeof name === 'string' && /^[A-Z]+$/.test(name)
        ? (path: string, init?: object) => value(path, { ...init, redirect: 'manual', signal: signal() })
        : value;
    },
  });
}

/**
 * What an answer breaks; of a body too large to read whole, its status and headers only. The
 * document and Ajv are loaded only now: a server that is not there is told in a blink.
 */
async function createJudge(secrets: readonly string[]): Promise<Live['judge']> {
  const doc = readDocumentFile().document;
  const { createSchemaValidator } = await import('../contract/schema.js');
  const schemas = createSchemaValidator(doc);
  const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
  return (operationId, answer) =>
    mismatches(doc, schemas, operations.get(operationId)!, answer, {
      body: !answer.tooLarge,
      redact: (text) => redact(text, secrets),
    }).map((violation) => {
      const line = describeViolation(violation);
      return { kind: kindOf(`response ${line}`), line, ...(violation.count ? { count: violation.count } : {}) };
    });
}

/** Runs one check, records its outcome and prints its lines; resolves with the line that stops the run, if it must stop. */
async function runCheck(live: Live, check: Check): Promise<string | undefined> {
  const { operationId } = check;
  const { options, out, record, budget, capture } = live;
  const { secrets } = live.credentials;
  const label = operationId.padEnd(34);
  const skip = (kind: SkipKind, cause: string, verb = 'skipped'): undefined => {
    record.outcomes.push({ operationId, checked: false, kind, cause });
    out.say(`- ${label} ${verb}: ${cause}`);
    return undefined;
  };
  if (check.writes && !options.allowWrites)
    return skip('writes', 'it writes (use --allow-writes --scratch-repo owner/name)', 'not run');
  const spent = budget.spent();
  if (spent) return skip('timeout', spent, 'not run');
  const began = performance.now();
  const call = await check.prepare({
    target: check.writes ? options.writeTarget : options.readTarget,
    lookUp: (path) => lookUp(options.baseUrl, path, live.credentials.headers, budget, secrets),
    keepSecret: (value) => void secrets.push(value),
  });
  if (typeof call !== 'function') return skip(call.kind, call.skip);
  const timer = budget.request();
  if (!timer) return skip('timeout', budget.spent()!, 'not run');
  capture.forget();
  live.signal = timer.signal;
  let failure: unknown;
  try {
    await call(live.client);
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
    return refusedLine(options.baseUrl, live.credentials, `${operationId} ${answered()}`);
  }
  if (refusal === 'operation') return skip('scope', `the token lacks a scope: ${answered()}`);
  out.release();
  let problems: Problem[];
  try {
    problems = live.judge(operationId, answer);
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
  record.outcomes.push({
    operationId,
    checked: true,
    status,
    problems,
    ms,
    ...(answer.tooLarge ? { notChecked: TOO_LARGE } : {}),
  });
  if (problems.length === 0) return void out.say(`✓ ${label} ${status} conforms`);
  const count = problemCount(problems);
  out.say(`✗ ${label} ${status} ${count} mismatch${count > 1 ? 'es' : ''}`);
  for (const { line } of problems) out.say(`    ${line}`);
  if (answer.tooLarge) out.say(`    (${TOO_LARGE})`);
  return undefined;
}

/** After the last check: the operations never run, the summary, and the exit code it comes to. */
function conclude(run: Run): number {
  const { options, out, record } = run;
  out.release();
  out.say(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
  const cause = 'never run by live mode: it changes data outside a scratch repository';
  for (const operationId of neverRun) record.outcomes.push({ operationId, checked: false, kind: 'never', cause });
  const checked = record.outcomes.filter((outcome) => outcome.checked);
  const failed = checked.filter((outcome) => outcome.problems.length > 0).length;
  for (const line of summaryLines(record.outcomes, failed)) out.say(line);
  const unchecked = uncheckedOf(record.outcomes);
  /** Why the operations `among` could not be checked, by kind of skip, with the first of each. */
  const nothing = (what: string, among = (_: string) => true): string =>
    whyUnchecked(
      what,
      unchecked.filter(({ operationId }) => among(operationId)),
    );
  if (checked.length === 0) return finish(run, 2, nothing('no operation could be checked'));
  // With --allow-writes, a run that wrote nothing cannot pass.
  const writes = new Set(checks.filter((check) => check.writes).map((check) => check.operationId));
  if (failed === 0 && options.allowWrites && !checked.some(({ operationId }) => writes.has(operationId)))
    return finish(
      run,
      2,
      nothing(`no write could be checked in ${options.scratchRepo}`, (id) => writes.has(id)),
    );
  const many = unchecked.length;
  if (failed === 0 && options.failOnSkip && many > 0)
    return finish(run, 2, nothing(`${many} operation${many === 1 ? '' : 's'} could not be checked (--fail-on-skip)`));
  return finish(run, failed > 0 ? 1 : 0);
}

/**
 * Ends the run: with `stopped`, the one line on stderr that says why nothing (more) could be
 * checked, the operations not yet taken recorded as not run; then the files asked for, and the
 * exit status.
 */
function finish({ options, credentials, out, record }: Run, exitCode: number, stopped?: string): number {
  if (stopped) out.warn(stopped);
  else out.release();
  const taken = new Set(record.outcomes.map(({ operationId }) => operationId));
  const cause = `not run: ${stopped ?? 'the run ended'}`;
  for (const operationId of [...checks.map((check) => check.operationId), ...neverRun])
    if (!taken.has(operationId)) record.outcomes.push({ operationId, checked: false, kind: 'stopped', cause });
  Object.assign(record, { exitCode, stopped, finished: new Date() });
  try {
    if (options.report) writeFileSync(options.report, jsonReport(record, credentials.secrets));
    if (options.junit) writeFileSync(options.junit, junitXml(record, credentials.secrets));
  } catch (error) {
    out.warn(`cannot write the results: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  return exitCode;
}
