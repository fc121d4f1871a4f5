// What a run of live mode found, operation by operation: each answer's status and mismatches, the
// operations skipped with their cause, and why the run stopped when it did.

/**
 * Why an operation was not checked: `writes` without --allow-writes, `never` run by live mode,
 * `input` an id or repository missing, `scope` the token lacks a scope, `timeout` no answer in
 * time, `stopped` the run ended before it.
 */
export type SkipKind = 'writes' | 'never' | 'input' | 'scope' | 'timeout' | 'stopped';

/** One mismatch between an answer and the document, with its kind (`response.body` …). */
export interface Problem {
  kind: string;
  line: string;
}

export type Outcome =
  | { operationId: string; checked: true; status: number | undefined; problems: Problem[]; ms: number }
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
