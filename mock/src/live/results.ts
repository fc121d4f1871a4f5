// What a run found, operation by operation (live mode) or delivery by delivery (the webhook
// receiver), and what is made of it: the JSON report (`--report`), the summary at the end of
// live mode's lines and the line that says why a run checked nothing. JUnit XML is junit.ts.
import { redact } from '../common/redaction.js';

/**
 * Why an operation was not checked, and what the summary says after each kind's count, in its
 * order: `input` an id or repository missing, `stopped` the run ended first, `writes` without
 * --allow-writes, `never` run by live mode; `outside`, for the receiver, a delivery the contract
 * does not describe.
 */
const REASONS = [
  ['scope', 'refused for want of a token scope'],
  ['timeout', 'ran out of time'],
  ['network', 'got no answer: the connection failed'],
  ['too-large', 'answered a body too large to check'],
  ['input', 'lacked an id or a repository'],
  ['stopped', 'not run: the run ended first'],
  ['writes', 'change data: not run without --allow-writes --scratch-repo owner/name'],
  ['never', 'never run by live mode: they change data outside a scratch repository'],
] as const;
export type SkipKind = (typeof REASONS)[number][0] | 'outside';

/** Why a look-up found nothing to use: the server's data (`input`), or no answer (`timeout`, `network`). */
export type MissingKind = Extract<SkipKind, 'input' | 'timeout' | 'network'>;

/** A mismatch with its kind (`response.body` …); `count` when its line stands for more (those left out of a body's list). */
export interface Problem {
  kind: string;
  line: string;
  count?: number;
}

export type Outcome =
  /** `notChecked`: what of the answer could not be checked (a body too large to read whole). */
  | {
      operationId: string;
      checked: true;
      status: number | undefined;
      problems: Problem[];
      ms: number;
      notChecked?: string;
    }
  | { operationId: string; checked: false; kind: SkipKind; cause: string };

type Skipped = Outcome & { checked: false };

export interface RunRecord {
  baseUrl: string;
  /** What answered GET /version, such as `Gitea 1.27.1`. */
  server?: string | undefined;
  started: Date;
  finished: Date;
  exitCode: number;
  /** The line that ended the run with exit code 2, when one did. */
  stopped?: string | undefined;
  /** Every operation of the contract, in the order live mode took them. */
  outcomes: Outcome[];
}

/** How many mismatches `problems` stand for, those left out of a list included. */
export const problemCount = (problems: readonly Problem[]): number =>
  problems.reduce((sum, problem) => sum + (problem.count ?? 1), 0);

const byId = (a: Outcome, b: Outcome): number => a.operationId.localeCompare(b.operationId);

/** The JSON report of `run`, redacted of `secrets`: per operation the proxy's counts and what live mode knows besides. */
export function jsonReport(run: RunRecord, secrets: readonly string[]): string {
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
  const skipped = skippedOf(run.outcomes)
    .sort(byId)
    .map(({ operationId, kind, cause }) => [operationId, { kind, cause }]);
  const report = {
    baseUrl: run.baseUrl,
    server: run.server ?? null,
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    exitCode: run.exitCode,
    ...(run.stopped ? { stopped: run.stopped } : {}),
    operations: Object.fromEntries(operations),
    skipped: Object.fromEntries(skipped),
  };
  // Redacted as text: the secrets are found JSON-escaped too.
  return `${redact(JSON.stringify(report, null, 2), secrets)}\n`;
}

/** Skips that leave unchecked an operation the run was asked to check: what `--fail-on-skip` fails. */
const UNCHECKED: readonly SkipKind[] = ['scope', 'timeout', 'network', 'too-large', 'input'];

const skippedOf = (outcomes: readonly Outcome[]): Skipped[] =>
  outcomes.filter((outcome): outcome is Skipped => !outcome.checked);

/** Operations the run was asked to check that it skipped. */
export const uncheckedOf = (outcomes: readonly Outcome[]): Skipped[] =>
  skippedOf(outcomes).filter((outcome) => UNCHECKED.includes(outcome.kind));

/** For each kind of skip among `outcomes`, in REASONS' order, `describe` of its count, reason and outcomes. */
const byReason = (outcomes: readonly Skipped[], describe: (kind: SkipKind, reason: string, of: Skipped[]) => string) =>
  REASONS.flatMap(([kind, reason]) => {
    const of = outcomes.filter((outcome) => outcome.kind === kind);
    return of.length === 0 ? [] : [describe(kind, reason, of)];
  }).join('; ');

/** `what: ` and, per kind of skip, how many and the first with its cause: why a run checked nothing, or not all it was asked to. */
export const whyUnchecked = (what: string, outcomes: readonly Skipped[]): string =>
  `${what}: ${byReason(outcomes, (_, reason, of) => `${of.length} ${reason} (the first, ${of[0]!.operationId}: ${of[0]!.cause})`)}`;

/** The last lines of the report: operations checked of all the contract's, then why the rest were not. */
export function summaryLines(outcomes: readonly Outcome[], failed: number): string[] {
  const skipped = skippedOf(outcomes);
  const lines = [
    `${outcomes.length - skipped.length} of ${outcomes.length} operations checked, ${failed} with mismatches`,
  ];
  if (skipped.length === 0) return lines;
  // Those the run was asked to check are named; writes and those never run are listed above.
  const parts = byReason(skipped, (kind, reason, of) =>
    UNCHECKED.includes(kind)
      ? `${of.length} ${reason} (${of.map(({ operationId }) => operationId).join(', ')})`
      : `${of.length} ${reason}`,
  );
  return [...lines, `${skipped.length} not checked: ${parts}`];
}
