// The results of a run as JUnit XML (`--junit`), which CI systems (GitHub, GitLab, Jenkins …)
// show as tests: one test case per operation of the contract, a `<failure>` per mismatch, a
// `<skipped>` with its cause per operation not checked, and a `server` test case that holds an
// `<error>` when the run stopped (no Gitea API, credentials refused, nothing checked), so a
// stopped run never shows green. Written here rather than with a library: junit-report-builder,
// the one in wide use, allows one failure per test case and no message on a skip, and bundles
// lodash and xmlbuilder (780 kB) for what is a few elements.
import { redact } from '../common/redaction.js';
import type { Outcome, RunRecord } from './results.js';

const CLASS = 'gitea-mock verify';

/** Whether XML 1.0 allows `code` in a document at all (its `Char` production). */
function allowed(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * `text` for XML content or a double-quoted attribute: markup characters as entities, line
 * breaks and tabs in attributes as character references (a parser would turn them into spaces),
 * a carriage return anywhere as one (a parser would drop it), and a character XML cannot hold at
 * all (a control character, an unpaired surrogate) as a visible `\uXXXX`.
 */
function escapeXml(text: string, attribute: boolean): string {
  let out = '';
  // Code point by code point: an unpaired surrogate comes alone.
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '&') out += '&amp;';
    else if (char === '<') out += '&lt;';
    else if (char === '>') out += '&gt;';
    else if (attribute && char === '"') out += '&quot;';
    else if (code === 0xd || (attribute && (code === 0xa || code === 0x9))) out += `&#${code};`;
    else if (allowed(code)) out += char;
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** An element: its attributes escaped, its children already written. */
function element(name: string, attributes: Record<string, string | number>, children = ''): string {
  const written = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value), true)}"`)
    .join('');
  return children === '' ? `<${name}${written}/>` : `<${name}${written}>${children}</${name}>`;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function testCase(outcome: Outcome, clean: (text: string) => string, className: string): string {
  if (!outcome.checked)
    return element(
      'testcase',
      { classname: className, name: outcome.operationId, time: seconds(0) },
      element('skipped', { message: clean(outcome.cause) }),
    );
  const failures = outcome.problems.map(({ kind, line }) =>
    element('failure', { message: clean(line), type: kind }, escapeXml(clean(line), false)),
  );
  const answered = `${outcome.status === undefined ? 'no answer' : `answered ${outcome.status}`}${outcome.notChecked ? `; ${clean(outcome.notChecked)}` : ''}`;
  return element(
    'testcase',
    { classname: className, name: outcome.operationId, time: seconds(outcome.ms) },
    [...failures, element('system-out', {}, escapeXml(answered, false))].join(''),
  );
}

/**
 * The JUnit XML of `run`, every credential in it redacted; `className` names the checker (the
 * webhook receiver, `gitea-mock webhooks`, writes its deliveries' results with it too).
 */
export function junitXml(run: RunRecord, secrets: readonly string[], className = CLASS): string {
  const clean = (text: string): string => redact(text, secrets);
  const server = element(
    'testcase',
    { classname: className, name: 'server', time: seconds(0) },
    [
      ...(run.stopped
        ? [element('error', { message: clean(run.stopped), type: 'stopped' }, escapeXml(clean(run.stopped), false))]
        : []),
      element('system-out', {}, escapeXml(clean(run.server ?? 'no Gitea API answered'), false)),
    ].join(''),
  );
  const cases = [server, ...run.outcomes.map((outcome) => testCase(outcome, clean, className))];
  const counts = {
    tests: cases.length,
    failures: run.outcomes.filter((outcome) => outcome.checked && outcome.problems.length > 0).length,
    errors: run.stopped ? 1 : 0,
    skipped: run.outcomes.filter((outcome) => !outcome.checked).length,
    time: seconds(run.finished.getTime() - run.started.getTime()),
  };
  const properties = element(
    'properties',
    {},
    [
      element('property', { name: 'base-url', value: clean(run.baseUrl) }),
      ...(run.server ? [element('property', { name: 'server', value: clean(run.server) })] : []),
    ].join(''),
  );
  // JUnit's timestamp is a local date and time without a zone: this one is UTC.
  const suite = element(
    'testsuite',
    { name: clean(`${className} ${run.baseUrl}`), ...counts, timestamp: run.started.toISOString().slice(0, 19) },
    `\n${[properties, ...cases].join('\n')}\n`,
  );
  // The common JUnit schema (Jenkins' junit-10.xsd) allows `skipped` on <testsuite> only: a reader
  // that validates refuses the whole file for it on <testsuites>.
  const { skipped: _onTheSuiteOnly, ...totals } = counts;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element('testsuites', { name: className, ...totals }, `\n${suite}\n`)}\n`;
}
