// A run's results as JUnit XML (`--junit`): live mode's, the webhook receiver's and the proxy's.
import { redact } from '../common/redaction.js';

/** Why an operation was not checked, and what live mode's summary says after each kind's count, in its order. */
export const REASONS = [
  ['scope', 'refused for want of a token scope'],
  ['timeout', 'ran out of time'],
  ['network', 'got no answer: the connection failed'],
  ['too-large', 'answered a body too large to check'],
  ['input', 'lacked an id or a repository'],
  ['stopped', 'not run: the run ended first'],
  ['writes', 'change data: not run without --allow-writes --scratch-repo owner/name'],
  ['never', 'never run by live mode: they change data outside a scratch repository'],
  ['absent', 'are not on this server: its profile has no route for them'],
] as const;
/** `outside`, for the receiver: a delivery the contract does not describe. */
export type SkipKind = (typeof REASONS)[number][0] | 'outside';

/** `count` when its line stands for more (those left out of a body's list). */
export type Problem = { kind: string; line: string; count?: number };

/** `notChecked`: what of the answer could not be checked (a body too large to read whole). */
type Checked = { operationId: string; checked: true; status: number | undefined; problems: Problem[]; ms: number };
export type Outcome =
  | (Checked & { notChecked?: string })
  | { operationId: string; checked: false; kind: SkipKind; cause: string };

export interface RunRecord {
  baseUrl: string;
  /** What answered GET /version, such as `Gitea 1.27.1`. */
  server?: string | undefined;
  /** The server profile the answers were checked against, such as `forgejo-11`. */
  profile?: string | undefined;
  started: Date;
  finished: Date;
  exitCode: number;
  /** The line that ended the run with exit code 2, when one did. */
  stopped?: string | undefined;
  outcomes: Outcome[];
}

/** Markup characters as entities; a carriage return (a parser would drop it), and in attributes line breaks and tabs (it would make them spaces), as references. */
const ESCAPED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** What XML 1.0 cannot hold at all (its `Char` production): control characters, unpaired surrogates, U+FFFE, U+FFFF. */
const UNWRITABLE = '[^\\t\\n\\r\\x20-\\ud7ff\\ue000-\\ufffd\\u{10000}-\\u{10ffff}]';
const CONTENT = new RegExp(`[&<>\\r]|${UNWRITABLE}`, 'gu');
const ATTRIBUTE = new RegExp(`[&<>"\\r\\n\\t]|${UNWRITABLE}`, 'gu');

/** `text` for XML content or a double-quoted attribute; a character XML cannot hold as a visible `\uXXXX`. */
function escapeXml(text: string, attribute: boolean): string {
  return text.replace(attribute ? ATTRIBUTE : CONTENT, (char) => {
    const code = char.codePointAt(0)!;
    return ESCAPED[char] ?? (/[\t\n\r]/.test(char) ? `&#${code};` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}

/** An element: its attributes escaped, its children already written. */
function element(name: string, attributes: Record<string, string | number>, children: string[] = []): string {
  const written = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value), true)}"`)
    .join('');
  const inner = children.join('');
  return inner === '' ? `<${name}${written}/>` : `<${name}${written}>${inner}</${name}>`;
}

const text = (content: string): string => escapeXml(content, false);
const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** The JUnit XML of `run`, redacted of `secrets`; `classname` names the checker (`gitea-mock webhooks` for the receiver). */
export function junitXml(run: RunRecord, secrets: readonly string[], classname = 'gitea-mock verify'): string {
  const clean = (content: string): string => redact(content, secrets);
  const testCase = (name: string, ms: number, children: string[]) =>
    element('testcase', { classname, name, time: seconds(ms) }, children);
  const out = (content: string): string => element('system-out', {}, [text(content)]);
  const fault = (name: string, type: string, line: string): string =>
    element(name, { message: clean(line), type }, [text(clean(line))]);
  const stopped = run.stopped ? [fault('error', 'stopped', run.stopped)] : [];
  const cases = [
    testCase('server', 0, [...stopped, out(clean(run.server ?? 'no Gitea API answered'))]),
    ...run.outcomes.map((outcome) => {
      if (!outcome.checked)
        return testCase(outcome.operationId, 0, [element('skipped', { message: clean(outcome.cause) })]);
      const failures = outcome.problems.map(({ kind, line }) => fault('failure', kind, line));
      const answered = `${outcome.status === undefined ? 'no answer' : `answered ${outcome.status}`}${outcome.notChecked ? `; ${clean(outcome.notChecked)}` : ''}`;
      return testCase(outcome.operationId, outcome.ms, [...failures, out(answered)]);
    }),
  ];
  const counts = {
    tests: cases.length,
    failures: run.outcomes.filter((outcome) => outcome.checked && outcome.problems.length > 0).length,
    errors: run.stopped ? 1 : 0,
    skipped: run.outcomes.filter((outcome) => !outcome.checked).length,
    time: seconds(run.finished.getTime() - run.started.getTime()),
  };
  const property = (name: string, value: string): string => element('property', { name, value: clean(value) });
  const properties = [
    property('base-url', run.baseUrl),
    ...(run.server ? [property('server', run.server)] : []),
    ...(run.profile ? [property('profile', run.profile)] : []),
  ];
  // JUnit's timestamp is a local date and time without a zone: this one is UTC.
  const suite = element(
    'testsuite',
    { name: clean(`${classname} ${run.baseUrl}`), ...counts, timestamp: run.started.toISOString().slice(0, 19) },
    [`\n${[element('properties', {}, properties), ...cases].join('\n')}\n`],
  );
  // Jenkins' junit-10.xsd allows `skipped` on <testsuite> only, and refuses the file for it on <testsuites>.
  const { skipped: _onTheSuiteOnly, ...totals } = counts;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element('testsuites', { name: classname, ...totals }, [`\n${suite}\n`])}\n`;
}
