// What a run of live mode found, operation by operation, and the JSON report of it (`--report`):
// the proxy's report (per operation the exchanges, how many had violations, the violations by
// kind) plus what live mode knows besides: each answer's status and mismatches, the operations
// skipped with their cause, and why the run stopped when it did.
import { redact } from '../common/redaction.js';

/**
 * Why an operation was not checked: `writes` without --allow-writes, `never` run by live mode,
 * `input` an id or repository missing, `scope` the token lacks a scope, `timeout` no answer in
 * time, `network` no answer because the connection failed (refused, reset, closed), `too-large`
 * a body too large to read whole (its status and headers conform), `stopped` the run ended
 * before it; `outside`, in the webhook receiver's results, a delivery the contract does not describe.
 */
export type SkipKind =
  | 'writes'
  | 'never'
  | 'input'
  | 'scope'
  | 'timeout'
  | 'network'
  | 'too-large'
  | 'stopped'
  /** A delivery the webhook receiver got that the contract does not describe (a push, another action). */
  | 'outside';

/** Why a look-up found nothing to use: the server's data (`input`), or no answer (`timeout`, `network`). */
export type MissingKind = Extract<SkipKind, 'input' | 'timeout' | 'network'>;

/** One mismatch between an answer and the document, with its kind (`response.body` …); `count` when its line stands for more (those left out of a body's list). */
export interface Problem {
  kind: string;
  line: string;
  count?: number;
}

/** How many mismatches `problems` stand for, those left out of a list included. */
export function problemCount(problems: readonly Problem[]): number {
  return problems.reduce((sum, problem) => sum + (problem.count ?? 1), 0);
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

export interface RunRecord {
  baseUrl: string;
  /** What answered GET /version, such as `Gitea 1.27.1`. */
  server: string | undefined;
  started: Date;
  finished: Date;
  exitCode: number;
  /** The line that ended the run with exit code 2, when one did. */
  stopped: string | undefined;
  /** Every operation of the contract, in the order live mode took them. */
  outcomes: Outcome[];
}

/** The JSON report of `run`, every credential in it redacted. */
export function jsonReport(run: RunRecord, secrets: readonly string[]): string {
  const checked = run.outcomes
    .filter((outcome) => outcome.checked)
    .sort((a, b) => a.operationId.localeCompare(b.operationId));
  const skipped = run.outcomes
    .filter((outcome) => !outcome.checked)
    .sort((a, b) => a.operationId.localeCompare(b.operationId));
  const operations = Object.fromEntries(
    checked.map(({ operationId, status, problems, notChecked }) => {
      const violations: Record<string, number> = {};
      for (const { kind, count = 1 } of problems) violations[kind] = (violations[kind] ?? 0) + count;
      return [
        operationId,
        {
          exchanges: 1,
          withViolations: problems.length > 0 ? 1 : 0,
          violations,
          status: status ?? null,
          mismatches: problems.map(({ line }) => line),
          ...(notChecked ? { notChecked } : {}),
        },
      ];
    }),
  );
  const report = {
    baseUrl: run.baseUrl,
    server: run.server ?? null,
    started: run.started.toISOString(),
    finished: run.finished.toISOString(),
    exitCode: run.exitCode,
    ...(run.stopped ? { stopped: run.stopped } : {}),
    operations,
    skipped: Object.fromEntries(skipped.map(({ operationId, kind, cause }) => [operationId, { kind, cause }])),
  };
  // Redacted as text: the secrets are found JSON-escaped too.
  return `${redact(JSON.stringify(report, null, 2), secrets)}\n`;
}
