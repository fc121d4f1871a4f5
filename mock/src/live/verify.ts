// `gitea-mock verify --base-url https://host/api/v1` (in this repository, `npm run test:live --
// --base-url …`): checks that a Gitea API answers there, runs operations against it (a real Gitea
// or Forgejo), validates every answer against openapi.yaml, prints the mismatches per operation,
// then how many of the contract's operations were checked and why the others were not, and exits
// 1 if there are any mismatches. It exits 2 when it could check nothing: wrong options, a server
// that cannot be reached or is no Gitea API, credentials the server refuses, or every operation
// skipped, timed out or left without an answer by a failed connection (a server that went down
// after /version); and with --fail-on-skip when it could not check every operation it was asked
// to. A run that was refused, timed out or cut off never passes for a conforming one, and a
// request that got no answer is never a mismatch.
// Every line it prints and every file it writes is redacted of the credentials, in any case, even
// those a server echoes; it reads at most 10 MB of an answer, judges a redirect as the answer
// instead of following it, and the whole run keeps within --timeout.
import { writeFileSync } from 'node:fs';
import { createGiteaClient, type GiteaClient } from 'gitea-contract';
import { redact } from '../common/redaction.js';
import { listOperations } from '../contract/document.js';
import { readDocumentFile } from '../contract/document-file.js';
import { describeViolation, mismatches } from '../contract/conformance.js';
import { kindOf } from '../contract/violation-kind.js';
import { createBudget } from './budget.js';
import { checks, neverRun, type Context } from './checks.js';
import { readCredentials, refusedLine } from './credentials.js';
import { junitXml } from './junit.js';
import { Refusal } from '../common/refusal.js';
import { parseOptions, USAGE, type Options } from './options.js';
import { failureCause, probeServer } from './reachability.js';
import { refusalIn } from './refusal.js';
import { jsonReport, problemCount, type Problem, type RunRecord, type SkipKind } from './results.js';
import { summaryLines, uncheckedOf, whyUnchecked } from './summary.js';
import { createCapture, lookUp, statusWithMessage, TOO_LARGE, type CapturedAnswer } from './wire.js';

/** Where live mode writes its report lines (stdout) and its one-line refusals and usage (stderr). */
export interface VerifyOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Runs live mode with the command line's arguments after `verify` and the environment it reads
 * the credentials from; resolves with the exit code. The `gitea-mock verify` command (cli.ts)
 * exits with it; the tests call it in their own process too.
 */
export async function verify(args: readonly string[], env: NodeJS.ProcessEnv, io: VerifyOutput): Promise<number> {
  // The credentials first: every line printed and every file written from here on is redacted of them.
  const credentials = readCredentials(env);
  const { auth, headers } = credentials;
  // The Authorization value, the token or Basic credential in it, the token or password, the one-time
  // code; and any secret of the server's a check sends back (a hook's authorization header).
  const secrets = credentials.secrets;

  /**
   * Lines of the report are held back until an answer shows that the credentials work: a run that
   * stops because they are refused then prints one line, on stderr, as when the server cannot be
   * reached, and nothing on stdout.
   */
  let held: string[] | undefined = [];

  /** Prints a line of the report; a server may have echoed a credential into it, in any case. */
  function say(line: string): void {
    const text = `${redact(line, secrets)}\n`;
    if (held) held.push(text);
    else io.stdout(text);
  }

  function release(): void {
    if (held) io.stdout(held.join(''));
    held = undefined;
  }

  /** Prints `gitea-mock verify: <message>` on stderr, redacted as the report is. */
  function warn(message: string, after = ''): void {
    io.stderr(redact(`gitea-mock verify: ${message}\n${after}`, secrets));
  }

  /** A usage error: its line and the usage, and exit status 2. */
  function fail(message: string): number {
    warn(message, `\n${USAGE}`);
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

  const run: RunRecord = {
    baseUrl,
    server: undefined,
    started: new Date(),
    finished: new Date(),
    exitCode: 2,
    stopped: undefined,
    outcomes: [],
  };

  /**
   * Ends the run: with `stopped`, the one line on stderr that says why nothing (more) could be
   * checked; the operations not yet taken are recorded as not run. Then the files asked for, and
   * the exit status.
   */
  function finish(exitCode: number, stopped?: string): number {
    if (stopped) {
      held = undefined;
      warn(stopped);
    } else {
      release();
    }
    const taken = new Set(run.outcomes.map(({ operationId }) => operationId));
    for (const operationId of [...checks.map((check) => check.operationId), ...neverRun]) {
      if (!taken.has(operationId))
        run.outcomes.push({
          operationId,
          checked: false,
          kind: 'stopped',
          cause: `not run: ${stopped ?? 'the run ended'}`,
        });
    }
    Object.assign(run, { exitCode, stopped, finished: new Date() });
    try {
      if (options.report) writeFileSync(options.report, jsonReport(run, secrets));
      if (options.junit) writeFileSync(options.junit, junitXml(run, secrets));
    } catch (error) {
      warn(`cannot write the results: ${error instanceof Error ? error.message : String(error)}`);
      return 2;
    }
    return exitCode;
  }

  const budget = createBudget(options.timeoutMs, options.requestTimeoutMs);
  const capture = createCapture();
  /** The signal of the request under way: its --request-timeout, within the run's --timeout. */
  let requestSignal: AbortSignal | undefined;
  let client: GiteaClient;
  try {
    const made = createGiteaClient({
      baseUrl,
      ...(auth ? { auth } : {}),
      fetch: capture.fetch,
      retry: 0,
      allowInsecureHttp: options.allowInsecureHttp,
    });
    // Each call hands a redirect back unfollowed: the 3xx is the server's answer, checked against
    // the document (some operations declare 301 or 307), and nothing goes where it points. Each
    // call also carries the signal of its time limit.
    client = new Proxy(made, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        return typeof value === 'function' && typeof name === 'string' && /^[A-Z]+$/.test(name)
          ? (path: string, init?: object) => value(path, { ...init, redirect: 'manual', signal: requestSignal })
          : value;
      },
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }

  const probe = await probeServer(baseUrl, {
    headers,
    timeoutMs: Math.min(options.connectTimeoutMs, options.timeoutMs),
    timeoutFlag: options.timeoutMs < options.connectTimeoutMs ? '--timeout' : '--connect-timeout',
    secrets,
    refused: (answered) => refusedLine(baseUrl, credentials, answered),
  });
  if (!probe.ok) return finish(2, probe.problem);
  run.server = probe.server;
  // The document and its validators only now, Ajv's import included: a server
  // that is not there is told in a blink.
  const doc = readDocumentFile().document;
  const { createSchemaValidator } = await import('../contract/schema.js');
  const schemas = createSchemaValidator(doc);
  const operations = new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op]));
  say(
    `live contract check of ${baseUrl} (${options.allowWrites ? `writes allowed in ${options.scratchRepo}` : 'read-only'})`,
  );
  // The version comes from the server, which may echo a credential there too.
  say(`server: ${probe.server}`);

  /** The line that stops the run when `operationId`'s answer refuses the credentials themselves. */
  function refused(operationId: string, answer: CapturedAnswer): string {
    return refusedLine(
      baseUrl,
      credentials,
      `${operationId} answered ${statusWithMessage(answer.status, answer.body, secrets)}`,
    );
  }

  /** What the answer breaks; of a body too large to read whole, its status and headers only. */
  function judge(operationId: string, answer: CapturedAnswer): Problem[] {
    return mismatches(doc, schemas, operations.get(operationId)!, answer, {
      body: !answer.tooLarge,
      redact: (text) => redact(text, secrets),
    }).map((violation) => {
      const line = describeViolation(violation);
      return { kind: kindOf(`response ${line}`), line, ...(violation.count ? { count: violation.count } : {}) };
    });
  }

  /** Why the operations `among` could not be checked, by kind of skip, with the first of each: `no operation could be checked: …`. */
  function nothingChecked(
    what = 'no operation could be checked',
    among: (operationId: string) => boolean = () => true,
  ): string {
    return whyUnchecked(
      what,
      uncheckedOf(run.outcomes).filter(({ operationId }) => among(operationId)),
    );
  }

  let checked = 0;
  let failed = 0;
  /** Writes checked: with --allow-writes, a run that wrote nothing cannot pass. */
  let written = 0;
  const writes = new Set(checks.filter((check) => check.writes).map((check) => check.operationId));
  for (const check of checks) {
    const { operationId } = check;
    const label = operationId.padEnd(34);
    const skip = (kind: SkipKind, cause: string, verb = 'skipped'): void => {
      run.outcomes.push({ operationId, checked: false, kind, cause });
      say(`- ${label} ${verb}: ${cause}`);
    };
    if (check.writes && !options.allowWrites) {
      skip('writes', 'it writes (use --allow-writes --scratch-repo owner/name)', 'not run');
      continue;
    }
    const spent = budget.spent();
    if (spent) {
      skip('timeout', spent, 'not run');
      continue;
    }
    const began = performance.now();
    const ctx: Context = {
      target: check.writes ? options.writeTarget : options.readTarget,
      lookUp: (path) => lookUp(baseUrl, path, headers, budget, secrets),
      keepSecret: (value) => void secrets.push(value),
    };
    const call = await check.prepare(ctx);
    if (typeof call !== 'function') {
      skip(call.kind, call.skip);
      continue;
    }
    const timer = budget.request();
    if (!timer) {
      skip('timeout', budget.spent()!, 'not run');
      continue;
    }
    capture.forget();
    requestSignal = timer.signal;
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
    if (!answer && timedOut) {
      skip('timeout', `timed out: ${timedOut}`);
      continue;
    }
    // No answer at all: the connection was refused, reset or closed. Nothing to judge, so no
    // mismatch: the server, not the contract, failed.
    if (!answer) {
      skip(
        'network',
        failure === undefined ? 'no answer was received' : `the request failed: ${failureCause(failure)}`,
      );
      continue;
    }
    const refusal = refusalIn(answer);
    if (refusal === 'everywhere') {
      run.outcomes.push({
        operationId,
        checked: false,
        kind: 'stopped',
        cause: `the credentials were refused: answered ${statusWithMessage(answer.status, answer.body, secrets)}`,
      });
      return finish(2, refused(operationId, answer));
    }
    if (refusal === 'operation') {
      skip('scope', `the token lacks a scope: answered ${statusWithMessage(answer.status, answer.body, secrets)}`);
      continue;
    }
    release();
    let problems: Problem[];
    try {
      problems = judge(operationId, answer);
    } catch (error) {
      // Live mode's own failure, not the server's: the run stops with it, its files written.
      return finish(
        2,
        `the check of ${operationId}'s answer failed: ${error instanceof Error ? error.message : String(error)}; this is a bug in gitea-mock`,
      );
    }
    const { status } = answer;
    // A body too large to read was not checked: with nothing else wrong, the operation was not
    // checked either, and is skipped with that cause; a status or header that breaks the document
    // is a mismatch all the same.
    if (answer.tooLarge && problems.length === 0) {
      skip(
        'too-large',
        `answered ${status} with a ${TOO_LARGE.replace(/^body is/, 'body')} (its status and declared headers conform)`,
      );
      continue;
    }
    // A write answered 404 wrote nothing: the scratch repository, or what the write names in it,
    // is not there. Its answer conforms, but the write was not checked, and a run whose writes all
    // went nowhere must not pass for one that wrote.
    if (check.writes && status === 404 && problems.length === 0) {
      skip(
        'input',
        `nothing was written: answered ${statusWithMessage(status, answer.body, secrets)} (the scratch repository ${options.scratchRepo}, or what this write names in it, is not there)`,
      );
      continue;
    }
    // A read answered 404 read nothing: a wrong id or repository must not pass for a checked
    // answer. Its error body conforms, and the skip says what to give instead.
    if (!check.writes && status === 404 && problems.length === 0) {
      skip(
        'input',
        `nothing was read: answered ${statusWithMessage(status, answer.body, secrets)} (what this read names is not there: check the ids and the repository given)`,
      );
      continue;
    }
    checked++;
    if (check.writes) written++;
    run.outcomes.push({
      operationId,
      checked: true,
      status,
      problems,
      ms: performance.now() - began,
      ...(answer.tooLarge ? { notChecked: TOO_LARGE } : {}),
    });
    if (problems.length === 0) {
      say(`✓ ${label} ${status} conforms`);
    } else {
      failed++;
      const count = problemCount(problems);
      say(`✗ ${label} ${status} ${count} mismatch${count > 1 ? 'es' : ''}`);
      for (const { line } of problems) say(`    ${line}`);
      if (answer.tooLarge) say(`    (${TOO_LARGE})`);
    }
  }
  release();
  say(`- not run by live mode (they change data outside a scratch repository): ${neverRun.join(', ')}`);
  for (const operationId of neverRun)
    run.outcomes.push({
      operationId,
      checked: false,
      kind: 'never',
      cause: 'never run by live mode: it changes data outside a scratch repository',
    });
  for (const line of summaryLines(run.outcomes, failed)) say(line);
  if (checked === 0) return finish(2, nothingChecked());
  if (failed === 0 && options.allowWrites && written === 0)
    return finish(
      2,
      nothingChecked(`no write could be checked in ${options.scratchRepo}`, (operationId) => writes.has(operationId)),
    );
  const unchecked = uncheckedOf(run.outcomes).length;
  if (failed === 0 && options.failOnSkip && unchecked > 0)
    return finish(
      2,
      nothingChecked(`${unchecked} operation${unchecked === 1 ? '' : 's'} could not be checked (--fail-on-skip)`),
    );
  return finish(failed > 0 ? 1 : 0);
}
