// The end of a run's report: how many of the contract's operations were checked, and for each
// reason the others were not, how many and which. `--fail-on-skip` fails a run in which any
// operation live mode would have checked was skipped instead.
import type { Outcome, SkipKind } from './results.js';

/** What each kind of skip says after its count, in the order the summary gives them. */
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
const skipped = (outcomes: readonly Outcome[]): Skipped[] =>
  outcomes.filter((outcome): outcome is Skipped => !outcome.checked);

/** Operations the run was asked to check that it skipped: the ones `--fail-on-skip` fails on. */
export function uncheckedOf(outcomes: readonly Outcome[]): Skipped[] {
  return skipped(outcomes).filter((outcome) => UNCHECKED.includes(outcome.kind));
}

/**
 * `what: ` and, for each kind of skip among `outcomes`, how many and the first with its cause:
 * the line that says why a run checked nothing, or not all it was asked to.
 */
export function whyUnchecked(what: string, outcomes: readonly Skipped[]): string {
  const parts = REASONS.flatMap(([kind, reason]) => {
    const ofKind = outcomes.filter((outcome) => outcome.kind === kind);
    return ofKind.length === 0
      ? []
      : [`${ofKind.length} ${reason} (the first, ${ofKind[0]!.operationId}: ${ofKind[0]!.cause})`];
  });
  return `${what}: ${parts.join('; ')}`;
}

/** The last lines of the report: operations checked of all the contract's, then why the rest were not. */
export function summaryLines(outcomes: readonly Outcome[], failed: number): string[] {
  const checked = outcomes.length - skipped(outcomes).length;
  const lines = [`${checked} of ${outcomes.length} operations checked, ${failed} with mismatches`];
  const notChecked = skipped(outcomes);
  if (notChecked.length === 0) return lines;
  const parts = REASONS.flatMap(([kind, reason]) => {
    const ofKind = notChecked.filter((outcome) => outcome.kind === kind);
    if (ofKind.length === 0) return [];
    // Those the run was asked to check are named; writes and those never run are listed above.
    const names = UNCHECKED.includes(kind) ? ` (${ofKind.map(({ operationId }) => operationId).join(', ')})` : '';
    return [`${ofKind.length} ${reason}${names}`];
  });
  lines.push(`${notChecked.length} not checked: ${parts.join('; ')}`);
  return lines;
}
