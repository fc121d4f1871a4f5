// The runtime suite's report: one row per runtime (with its version), one column per step, and
// under it the reason of every cell that failed.
import type { ScenarioResult } from '../scenario.mjs';

/** What one runtime gave: the scenario's result, or why it could not run it. */
export interface Outcome {
  runtime: string;
  result?: ScenarioResult;
  error?: string;
}

function cellOk({ result }: Outcome, step: string): boolean {
  return result?.steps.find((s) => s.step === step)?.ok === true;
}

/** Why each failed cell failed, as `runtime / step: reason`; one line for a runtime that did not run. */
export function failures(outcome: Outcome, steps: readonly string[]): string[] {
  const { runtime, result, error } = outcome;
  if (!result) return [`${runtime}: did not run: ${error}`];
  return steps
    .filter((step) => !cellOk(outcome, step))
    .map((step) => `${runtime} / ${step}: ${result.steps.find((s) => s.step === step)?.reason ?? 'not reported'}`);
}

export function resultTable(outcomes: readonly Outcome[], steps: readonly string[]): string {
  const rows = outcomes.map((outcome) => {
    const label = outcome.result
      ? `${outcome.runtime} ${outcome.result.runtime.version}`
      : `${outcome.runtime} (no result)`;
    return [label, ...steps.map((step) => (cellOk(outcome, step) ? 'ok' : 'FAILED'))];
  });
  const header = ['runtime', ...steps];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const failed = outcomes.flatMap((outcome) => failures(outcome, steps));
  return [
    'the client scenario, runtime × step:',
    line(header),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...rows.map(line),
    ...(failed.length ? ['', ...failed.map((reason) => `✗ ${reason}`)] : []),
  ].join('\n');
}
