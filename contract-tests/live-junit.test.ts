// Live mode's JUnit XML (`gitea-mock verify --junit`), written from results that hold whatever a
// server may send: markup characters, line breaks, characters XML cannot hold, a credential. It
// must read back, as CI systems read it, with every mismatch and cause as written and no secret.
// Its structure must be what the common JUnit schema allows (Jenkins' xUnit plugin refuses a file
// that breaks its junit-10.xsd): support/junit.xsd holds those rules, checked with libxml2. The
// reader and the schema are checked too: they must refuse what CI systems would misread or refuse.
import { describe, expect, it } from 'vitest';
import { junitXml, type RunRecord } from '../test/support/mock-internals.js';
import { readJUnit, schemaProblems } from './support/junit.js';

const TOKEN = 'JUnit-Secret-Token-42';
const HOSTILE = 'a <tag> & "quotes" \'single\' ]]> --> line\nbreak\r\ttab ✓ 🚀';
/** Characters XML 1.0 cannot hold at all: control characters and an unpaired surrogate. */
const UNWRITABLE = 'nul\u0000 esc\u001b bell\u0007 lone\ud800 end\uffff';

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    baseUrl: 'http://127.0.0.1:3000/api/v1',
    server: 'Gitea 1.27.1',
    started: new Date('2026-05-04T10:00:00.000Z'),
    finished: new Date('2026-05-04T10:00:02.500Z'),
    exitCode: 1,
    stopped: undefined,
    outcomes: [
      {
        operationId: 'repoGetKey',
        checked: true,
        status: 200,
        ms: 12.5,
        problems: [
          { kind: 'response.body', line: `body /title ${HOSTILE}` },
          { kind: 'response.content-type', line: `content type application/x-${TOKEN.toLowerCase()} is not declared` },
          { kind: 'response.body', line: `body ${UNWRITABLE}` },
        ],
      },
      { operationId: 'renderMarkdown', checked: true, status: 200, ms: 3, problems: [] },
      {
        operationId: 'orgListTeamMembers',
        checked: false,
        kind: 'input',
        cause: `no team to use: GET /user/teams answered 404 ${HOSTILE}; give --team-id`,
      },
      { operationId: 'repoMigrate', checked: false, kind: 'never', cause: 'never run by live mode' },
    ],
    ...overrides,
  };
}

describe('live mode JUnit XML', () => {
  it('reads back as JUnit, one test case per operation, a <failure> per mismatch and a <skipped> per skip, each as written', () => {
    const xml = junitXml(run(), [TOKEN]);
    const [suite, ...others] = readJUnit(xml);
    expect(others).toEqual([]);
    expect(suite!.properties).toEqual({ 'base-url': 'http://127.0.0.1:3000/api/v1', server: 'Gitea 1.27.1' });
    expect(suite!.cases.map(({ name }) => name)).toEqual([
      'server',
      'repoGetKey',
      'renderMarkdown',
      'orgListTeamMembers',
      'repoMigrate',
    ]);
    const key = suite!.cases[1]!;
    expect(key.time).toBe(0.013);
    expect(key.failures.map(({ type }) => type)).toEqual(['response.body', 'response.content-type', 'response.body']);
    // Markup, quotes, line breaks and tabs come back as they were, in the message and the text.
    expect(key.failures[0]!.message).toBe(`body /title ${HOSTILE}`);
    expect(key.failures[0]!.text).toBe(`body /title ${HOSTILE}`);
    // A credential never: in any case it was echoed.
    expect(key.failures[1]!.message).toBe('content type application/x-[REDACTED] is not declared');
    expect(xml.toLowerCase()).not.toContain(TOKEN.toLowerCase());
    // What XML cannot hold is shown, not dropped and not left to break the file.
    expect(key.failures[2]!.message).toBe('body nul\\u0000 esc\\u001b bell\\u0007 lone\\ud800 end\\uffff');
    expect(suite!.cases[2]).toMatchObject({ failures: [], skipped: undefined, systemOut: 'answered 200' });
    expect(suite!.cases[3]!.skipped).toBe(`no team to use: GET /user/teams answered 404 ${HOSTILE}; give --team-id`);
    expect(suite!.cases[0]).toMatchObject({ errors: [], systemOut: 'Gitea 1.27.1' });
  });

  it('a stopped run carries an <error> in its server test case, so CI never shows it green', () => {
    const stopped = `http://127.0.0.1:3000/api/v1 refused the credentials: adminGetAllOrgs answered 401 "bad ${TOKEN}"`;
    const [suite] = readJUnit(junitXml(run({ exitCode: 2, stopped, outcomes: [] }), [TOKEN]));
    expect(suite!.cases).toHaveLength(1);
    expect(suite!.cases[0]!.errors).toEqual([
      {
        message: 'http://127.0.0.1:3000/api/v1 refused the credentials: adminGetAllOrgs answered 401 "bad [REDACTED]"',
        type: 'stopped',
      },
    ]);
  });

  it('every file it writes is valid against the JUnit schema: a run with mismatches and skips, a stopped one, one with nothing run', async () => {
    const files = [
      junitXml(run(), [TOKEN]),
      junitXml(run({ exitCode: 2, stopped: `refused the credentials ${HOSTILE}`, server: undefined, outcomes: [] }), [
        TOKEN,
      ]),
      junitXml(
        run({
          exitCode: 2,
          stopped: 'no operation could be checked',
          outcomes: [
            { operationId: 'adminGetAllOrgs', checked: false, kind: 'timeout', cause: `timed out ${UNWRITABLE}` },
          ],
        }),
        [TOKEN],
      ),
    ];
    expect(await schemaProblems(files.map((contents, index) => ({ fileName: `run-${index}.xml`, contents })))).toEqual(
      [],
    );
  });

  it('the schema refuses what junit-10.xsd refuses: skipped on <testsuites>, an unknown attribute or element, a property without a value', async () => {
    const xml = junitXml(run(), [TOKEN]);
    const spoilt = {
      'skipped.xml': xml.replace(
        '<testsuites name="gitea-mock verify" ',
        '<testsuites name="gitea-mock verify" skipped="2" ',
      ),
      'attribute.xml': xml.replace('name="renderMarkdown" ', 'name="renderMarkdown" status="passed" '),
      'element.xml': xml.replace('<system-out>answered 200', '<warning/><system-out>answered 200'),
      'property.xml': xml.replace(/(<property name="server") value="[^"]*"/, '$1'),
      'time.xml': xml.replace('time="0.013"', 'time="13 ms"'),
    };
    for (const contents of Object.values(spoilt)) expect(contents).not.toBe(xml);
    const problems = await schemaProblems(
      Object.entries(spoilt).map(([fileName, contents]) => ({ fileName, contents })),
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^skipped\.xml:2: .*Element 'testsuites', attribute 'skipped': The attribute 'skipped' is not allowed\.$/,
      ),
      expect.stringMatching(
        /^attribute\.xml:\d+: .*Element 'testcase', attribute 'status': The attribute 'status' is not allowed\.$/,
      ),
      expect.stringMatching(/^element\.xml:\d+: .*Element 'warning': This element is not expected\./),
      expect.stringMatching(
        /^property\.xml:\d+: .*Element 'property': The attribute 'value' is required but missing\.$/,
      ),
      expect.stringMatching(
        /^time\.xml:\d+: .*Element 'testcase', attribute 'time': .*'13 ms' is not (accepted|valid)/,
      ),
    ]);
  });

  it.each([
    [
      'a count that does not match the test cases',
      (xml: string) =>
        xml.replace(
          'failures="1" errors="0" skipped="2" time="2.500" timestamp',
          'failures="0" errors="0" skipped="2" time="2.500" timestamp',
        ),
      /says failures="0", but its test cases make 1/,
    ],
    ['a character XML forbids', (xml: string) => xml.replace('answered 200', 'answered\u0001200'), /holds U\+0001/],
    [
      'markup left unescaped in a text',
      (xml: string) => xml.replace('>body /title a &lt;tag&gt;', '>body /title a <tag>'),
      /closing tag/,
    ],
    [
      'markup left unescaped in an attribute',
      (xml: string) => xml.replace('"body /title a &lt;tag&gt;', '"body /title a <tag>'),
      /an attribute value holds a raw "<"/,
    ],
    ['another root', (xml: string) => xml.replace(/<(\/?)testsuites\b/g, '<$1results'), /not <testsuites>/],
    ['a test case without a name', (xml: string) => xml.replace('name="renderMarkdown" ', ''), /has no name/],
  ])('the reader refuses %s', (_what, spoil, problem) => {
    const xml = junitXml(run(), [TOKEN]);
    expect(() => readJUnit(xml)).not.toThrow();
    const spoilt = spoil(xml);
    expect(spoilt).not.toBe(xml);
    expect(() => readJUnit(spoilt)).toThrow(problem);
  });
});
