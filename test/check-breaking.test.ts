// `npm run check:breaking`. Its policy (scripts/breaking-policy.mjs: which changes break, their
// names for CHANGELOG.md, the operations they reach, the verdict and its lines) is a pure function,
// run here in-process on the changes of one real `redocly diff` run of a copy of openapi.yaml with
// four kinds of breaking change planted (a renamed property, a new required request field, a
// removed enum value, a changed type): a breaking change must pass only with the package's major
// version raised (the minor before 1.0) and each change named, as a whole name, in CHANGELOG.md;
// a change inside an operation by the operationId and the parameter or status it is in.
// The script itself runs as a process in scratch git repositories for the breaking run (whose
// `--report` gives the policy's tests their changes), the additive run (an optional field must
// pass) and the runs that compare nothing; the two that run `redocly diff` (1-2 s each) run at once.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { judgeChanges, namesWhole, type DiffChange } from '../scripts/breaking-policy.mjs';
import { SCRATCH_GIT_ENV } from './support/scratch-repo.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/check-breaking.mjs');
const run = promisify(execFile);

const SCHEMAS = ['components', 'schemas'];
type Plant = (doc: ReturnType<typeof parseDocument>) => void;

/** The four kinds of breaking change, each in a schema of its own. */
const BREAKING: Plant = (doc) => {
  // Renamed: Label.color becomes colour, in the schema only (redocly compares schemas).
  const label = doc.getIn([...SCHEMAS, 'Label', 'properties'], true) as {
    get(key: string, keep: true): unknown;
    delete(key: string): void;
    set(key: string, value: unknown): void;
  };
  const color = label.get('color', true);
  label.delete('color');
  label.set('colour', color);
  // A new required field in a request body.
  doc.setIn([...SCHEMAS, 'EditMilestoneOption', 'properties', 'note'], doc.createNode({ type: 'string' }));
  doc.setIn([...SCHEMAS, 'EditMilestoneOption', 'required'], doc.createNode(['note']));
  // An enum value removed from a request field.
  doc.setIn(
    [...SCHEMAS, 'AddCollaboratorOption', 'properties', 'permission', 'enum'],
    doc.createNode(['read', 'write', null]),
  );
  // A type changed in a schema many operations share.
  doc.setIn([...SCHEMAS, 'User', 'properties', 'id', 'type'], 'string');
};

/** An optional field added to a request body and to an answer. */
const OPTIONAL: Plant = (doc) => {
  doc.setIn([...SCHEMAS, 'EditHookOption', 'properties', 'note'], doc.createNode({ type: ['string', 'null'] }));
  doc.setIn([...SCHEMAS, 'DeployKey', 'properties', 'note'], doc.createNode({ type: 'string' }));
};

/** What the script must say of each planted change: its message, its name for CHANGELOG.md, and every operation it reaches. */
const EXPECTED = [
  {
    message: 'Property `color` of `Label` was renamed to `colour`. (property-removed)',
    name: 'Label.color',
    operations: ['issueRemoveAssignees', 'orgEditLabel', 'repoEditPullRequest'],
  },
  {
    message: 'Properties of `EditMilestoneOption` became required: `note`. (required-properties-added)',
    name: 'EditMilestoneOption.note',
    operations: ['issueEditMilestone'],
  },
  {
    message: "Enum of `permission` lost values: 'admin'. (enum-values-removed)",
    name: 'AddCollaboratorOption.permission',
    operations: ['repoAddCollaborator'],
  },
  // Redocly names one operation for it (issueRemoveAssignees); User is in the answers of seven.
  {
    message: "Type of `id` widened from 'integer' to 'string'. (schema-type-changed)",
    name: 'User.id',
    operations: [
      'issueRemoveAssignees',
      'listPackageVersions',
      'notifyReadThread',
      'orgListTeamMembers',
      'repoEditPullRequest',
      'repoGetKey',
      'repoMigrate',
    ],
  },
];

const CHANGELOG =
  '# Changelog\n\n## [Unreleased]\n\n## [0.1.0]\n\n- The first release; `Label.color` is a six-digit colour.\n';

interface Scenario {
  /** The package's version at the base and in the working tree. */
  versions?: [string, string];
  /** Lines added to CHANGELOG.md in the working tree. */
  changelog?: string[];
  plant?: Plant;
  /**
   * Where the base comes from: a release tag (default), or only a main branch to take the merge
   * base with, or neither; `before` a release tag on a first commit, before openapi.yaml was added.
   */
  base?: 'tag' | 'main' | 'none' | 'before';
  args?: string[];
}

const folders: string[] = [];
const original = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');

/** A scratch repository for `scenario`, and the script's exit code and output in it. */
async function check({
  versions = ['0.1.0', '0.1.0'],
  changelog = [],
  plant,
  base = 'tag',
  args = [],
}: Scenario): Promise<{ code: number; out: string }> {
  const folder = await mkdtemp(join(tmpdir(), 'gitea-contract-breaking-'));
  folders.push(folder);
  const git = (...gitArgs: string[]) =>
    run('git', gitArgs, { cwd: folder, env: { ...process.env, ...SCRATCH_GIT_ENV } });
  await git('init', '-q', '-b', base === 'none' ? 'trunk' : 'main');
  if (base === 'before') {
    await writeFile(join(folder, 'README.md'), '# scratch\n');
    await git('add', '.');
    await git('commit', '-q', '-m', 'before the document');
    await git('tag', `v${versions[0]}`);
  }
  await writeFile(join(folder, 'openapi.yaml'), original);
  await writeFile(join(folder, 'package.json'), JSON.stringify({ name: 'scratch', version: versions[0] }));
  await writeFile(join(folder, 'CHANGELOG.md'), CHANGELOG);
  await git('add', '.');
  await git('commit', '-q', '-m', 'the base');
  if (base === 'tag') await git('tag', `v${versions[0]}`);
  if (base === 'main') await git('switch', '-q', '-c', 'feature');
  if (plant) await writeFile(join(folder, 'openapi.yaml'), planted(plant).text);
  await writeFile(join(folder, 'package.json'), JSON.stringify({ name: 'scratch', version: versions[1] }));
  await writeFile(
    join(folder, 'CHANGELOG.md'),
    CHANGELOG.replace('## [Unreleased]\n', `## [Unreleased]\n\n${changelog.join('\n')}\n`),
  );
  return run(process.execPath, [SCRIPT, ...args], {
    cwd: folder,
    env: { ...process.env, ...SCRATCH_GIT_ENV },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      out: error.stdout + error.stderr,
    }),
  );
}

const named = (names: string[]) => names.map((name) => `- \`${name}\` changed: see the migration notes.`);

const plantings = new Map<Plant, { text: string; value: unknown }>();
/** openapi.yaml with `plant`'s changes, as text and as data; made once per plant (200 KB of YAML). */
function planted(plant: Plant): { text: string; value: unknown } {
  let made = plantings.get(plant);
  if (!made) {
    const doc = parseDocument(original);
    plant(doc);
    made = { text: doc.toString({ lineWidth: 0 }), value: doc.toJS({ maxAliasCount: -1 }) as unknown };
    plantings.set(plant, made);
  }
  return made;
}

/** The changes of one real `redocly diff` run: openapi.yaml against it with BREAKING planted. */
let changes: DiffChange[];
const docs = { base: parse(original, { maxAliasCount: -1 }) as unknown, revision: planted(BREAKING).value };

/** The policy's verdict on those changes, in-process: `versions` at the base and now, `changelog` lines added since the base. */
function verdict({
  versions = ['0.1.0', '0.1.0'],
  changelog = [],
  changes: given = changes,
  revision = docs.revision,
}: {
  versions?: [string, string];
  changelog?: string[];
  changes?: DiffChange[];
  revision?: unknown;
} = {}): { code: number; out: string } {
  const { code, lines } = judgeChanges({
    changes: given,
    docs: { base: docs.base, revision },
    baseCommit: '8680171',
    versions: { base: versions[0], current: versions[1] },
    changelogs: {
      base: CHANGELOG,
      current: CHANGELOG.replace('## [Unreleased]\n', `## [Unreleased]\n\n${changelog.join('\n')}\n`),
    },
  });
  return { code, out: `${lines.join('\n')}\n` };
}

let results: Record<'breaking' | 'optional', { code: number; out: string }>;
/** What `--report` wrote for the breaking run. */
let breakingReport: { base: { ref: string; commit: string }; code: number; lines: string[]; changes: DiffChange[] };
beforeAll(async () => {
  const report = join(await mkdtemp(join(tmpdir(), 'gitea-contract-breaking-report-')), 'report.json');
  folders.push(dirname(report));
  const [breaking, optional] = await Promise.all([
    check({ plant: BREAKING, args: ['--report', report] }),
    check({ plant: OPTIONAL, base: 'main' }),
  ]);
  results = { breaking: breaking!, optional: optional! };
  // The changes of the script's own `redocly diff` run, from its report.
  breakingReport = JSON.parse(await readFile(report, 'utf8')) as typeof breakingReport;
  changes = breakingReport.changes;
}, 120_000);

afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('npm run check:breaking', () => {
  it('compares with the last release tag by default', () => {
    expect(results.breaking.out).toMatch(
      /^check:breaking: openapi\.yaml against v0\.1\.0 \([0-9a-f]{7}, the last release tag\)$/m,
    );
  });

  it.each(EXPECTED)('catches "$message" with every operation it reaches', ({ message, name, operations }) => {
    const { code, out } = results.breaking;
    const block = out.slice(out.indexOf(`✗ ${message}\n`)).split('\n\n')[0]!;
    expect(block).toContain(`✗ ${message}\n`);
    expect(block).toContain(`\n  name: ${name}, at components/schemas/`);
    expect(block).toContain(
      `\n  reaches ${operations.length} operation${operations.length > 1 ? 's' : ''}: ${operations.join(', ')}`,
    );
    expect(code).toBe(1);
  });

  it('says what would allow them: a new minor version below 1.0, and each change named in CHANGELOG.md', () => {
    const { out } = results.breaking;
    expect(out).toContain('4 breaking changes');
    expect(out).toContain('- the version is 0.1.0, against 0.1.0 at ');
    expect(out).toContain(': raise it to 0.2.0 or later (npm version minor).');
    // The line of 0.1.0 that mentions Label.color is not new: it names nothing.
    expect(out).toContain(`names AddCollaboratorOption.permission, User.id, Label.color, EditMilestoneOption.note.`);
  });

  it('--report writes the base, the exit code, the lines printed after the first and the changes, as JSON', () => {
    const commit = /against v0\.1\.0 \(([0-9a-f]{7}),/.exec(results.breaking.out)![1]!;
    expect(breakingReport.base).toEqual({
      ref: 'v0.1.0',
      commit: expect.stringMatching(new RegExp(`^${commit}[0-9a-f]{33}$`)),
    });
    expect(breakingReport.code).toBe(1);
    expect(`${breakingReport.lines.join('\n')}\n`).toBe(results.breaking.out.split('\n').slice(1).join('\n'));
    expect(breakingReport.changes.filter((change) => change.impact === 'major')).toHaveLength(4);
  });

  it('the policy in-process, on the same changes, says what the script printed after its first line', () => {
    const printed = results.breaking.out.split('\n').slice(1).join('\n');
    const commit = /against v0\.1\.0 \(([0-9a-f]{7}),/.exec(results.breaking.out)![1]!;
    expect(verdict()).toEqual({ code: 1, out: printed.replaceAll(commit, '8680171') });
  });

  it('passes an optional field added to a request and to an answer, against the merge base with main', () => {
    const { code, out } = results.optional;
    expect(out).toMatch(/against the merge base with main \([0-9a-f]{7}, no release tag v\* yet\)/);
    expect(out).toContain('no breaking change (and 2 that break nothing).');
    expect(code).toBe(0);
  });

  it('passes the breaking changes once the version went from 0.1.0 to 0.2.0 and CHANGELOG.md names each', () => {
    const { code, out } = verdict({
      versions: ['0.1.0', '0.2.0'],
      changelog: named(EXPECTED.map((change) => change.name)),
    });
    expect(out).toContain('allowed: the version went from 0.1.0 to 0.2.0, and CHANGELOG.md names each change (');
    expect(code).toBe(0);
  });

  it('fails when CHANGELOG.md leaves one out, naming it', () => {
    const { code, out } = verdict({
      versions: ['0.1.0', '0.2.0'],
      changelog: named(EXPECTED.map((change) => change.name).filter((name) => name !== 'User.id')),
    });
    expect(out).toMatch(/- no line added to CHANGELOG\.md since [0-9a-f]{7} names User\.id\.\n/);
    expect(out).not.toContain('- the version is');
    expect(code).toBe(1);
  });

  it('fails from 1.0 on unless the major version goes up', () => {
    const { code, out } = verdict({
      versions: ['1.4.0', '1.5.0'],
      changelog: named(EXPECTED.map((change) => change.name)),
    });
    expect(out).toContain('- the version is 1.5.0, against 1.4.0 at ');
    expect(out).toContain('raise it to 2.0.0 or later (npm version major).');
    expect(out).not.toContain('- no line added');
    expect(code).toBe(1);
  });

  it('a name counts only whole: a line naming longer names that hold it names nothing', () => {
    const changelog = [
      '- Renamed NotAddCollaboratorOption.permissions; SomeUser.id_x.',
      '- Renamed Label.color to colour.',
      '- `EditMilestoneOption.note` is required.',
    ];
    const { code, out } = verdict({ versions: ['0.1.0', '0.2.0'], changelog });
    expect(out).toMatch(
      /- no line added to CHANGELOG\.md since [0-9a-f]{7} names AddCollaboratorOption\.permission, User\.id\.\n$/,
    );
    expect(code).toBe(1);
    expect(
      verdict({
        versions: ['0.1.0', '0.2.0'],
        changelog: [...changelog, '- AddCollaboratorOption.permission lost `admin`, and User.id is a string.'],
      }).code,
    ).toBe(0);
  });

  it.each([
    ['Label.color', 'Renamed `Label.color`.', true],
    ['Label.color', 'Renamed Label.color: see below', true],
    ['Label.color', '(Label.color, User.id)', true],
    ['Label.color', 'Renamed Label.colors', false],
    ['Label.color', 'Renamed Label.color_hex', false],
    ['Label.color', 'Renamed MyLabel.color', false],
    ['Label.color', 'Renamed Label.color.hex', false],
    ['adminGetAllOrgs.200.X-Total-Count', 'Dropped `adminGetAllOrgs.200.X-Total-Count`.', true],
    ['adminGetAllOrgs.200.X-Total-Count', 'Dropped adminGetAllOrgs.200.X-Total-Count-Exact', false],
  ])('names %s as a whole in "%s": %s', (name, line, whole) => {
    expect(namesWhole(line, name)).toBe(whole);
  });

  it('a change inside an operation goes by its operationId and the parameter, status or header it is in, not by the operationId alone', () => {
    // Pointers as redocly diff gives them for such changes (a run on openapi.yaml with them planted).
    const major = (message: string, ruleId: string) => [{ impact: 'major', message, ruleId }];
    const inside: DiffChange[] = [
      {
        impact: 'major',
        base: null,
        revision: { pointer: '#/paths/~1admin~1orgs/get/parameters/5' },
        verdicts: major('Required `q` query parameter was added.', 'parameter-became-required'),
      },
      {
        impact: 'major',
        base: { pointer: '#/paths/~1admin~1orgs/get/responses/404' },
        revision: null,
        verdicts: major('Response `404` was removed.', 'response-removed'),
      },
      {
        impact: 'major',
        base: { pointer: '#/paths/~1admin~1orgs/get/responses/200/headers/X-Total-Count' },
        revision: null,
        verdicts: major('Response header `X-Total-Count` was removed.', 'response-header-removed'),
      },
      {
        impact: 'major',
        base: { pointer: '#/paths/~1admin~1users~1{username}~1rename/post/parameters/0/schema/type' },
        revision: { pointer: '#/paths/~1admin~1users~1{username}~1rename/post/parameters/0/schema/type' },
        verdicts: major("Type narrowed from 'string' to 'integer'.", 'schema-type-changed'),
      },
    ];
    const revision = structuredClone(docs.base) as { paths: Record<string, { get: { parameters: unknown[] } }> };
    revision.paths['/admin/orgs']!.get.parameters.push({
      name: 'q',
      in: 'query',
      required: true,
      schema: { type: 'string' },
    });
    const names = [
      'adminGetAllOrgs.q',
      'adminGetAllOrgs.404',
      'adminGetAllOrgs.200.X-Total-Count',
      'adminRenameUser.username',
    ];
    // A line that mentions the operation, as many do, names none of them.
    const { code, out } = verdict({
      versions: ['0.1.0', '0.2.0'],
      changes: inside,
      revision,
      changelog: ['- adminGetAllOrgs and adminRenameUser: clearer descriptions.'],
    });
    expect(out).toContain(
      '\n  name: adminGetAllOrgs.q, at paths/~1admin~1orgs/get/parameters/5\n  reaches 1 operation: adminGetAllOrgs\n',
    );
    expect(out).toContain(`- no line added to CHANGELOG.md since 8680171 names ${names.join(', ')}.\n`);
    expect(code).toBe(1);
    expect(verdict({ versions: ['0.1.0', '0.2.0'], changes: inside, revision, changelog: named(names) }).code).toBe(0);
  });

  it('says so clearly when there is no base: no release tag and no main branch', async () => {
    const { code, out } = await check({ plant: OPTIONAL, base: 'none' });
    expect(out).toContain(
      'check:breaking: no base to compare with: no release tag v* is reachable from HEAD, and there is no main branch (nor origin/main) to take the merge base with; give one: npm run check:breaking -- <ref>',
    );
    expect(code).toBe(2);
  });

  it('refuses a ref that does not exist, and --report without a file', async () => {
    const { code, out } = await check({ args: ['v9.9.9'] });
    expect([code, out.trim().split('\n').at(-1)]).toEqual([2, 'check:breaking: "v9.9.9" is no git ref or commit here']);
    const bare = await check({ args: ['--report'] });
    expect([bare.code, bare.out]).toEqual([2, 'check:breaking: --report needs a file name\n']);
  });

  it('compares with the ref given, and passes a document that was not there yet', async () => {
    const { code, out } = await check({ plant: BREAKING, base: 'before', args: ['v0.1.0'] });
    expect(out).toContain('against v0.1.0 (');
    expect(out).toMatch(
      /^check:breaking: openapi\.yaml against v0\.1\.0 \(([0-9a-f]{7}), as given\)\nopenapi\.yaml is not at \1: nothing it had can break\.\n$/,
    );
    expect(code).toBe(0);
  });
});

describe('a document with a $ref outside itself', () => {
  it('is refused before redocly diff runs: no URL fetched, no file read into the report', async () => {
    const { redoclyDiff } = await import('../scripts/redocly-diff.mjs');
    const { createServer } = await import('node:http');
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url!);
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const text = await readFile(join(ROOT, 'openapi.yaml'), 'utf8');
    try {
      for (const ref of [`http://127.0.0.1:${port}/schema.yaml`, '/etc/hostname']) {
        const planted = text.replace(/( {4}APIError:\n)/, `    Planted:\n      $ref: '${ref}'\n$1`);
        await expect(redoclyDiff(text, planted)).rejects.toThrow(
          `the revision has a $ref outside the document (${JSON.stringify(ref)}): the comparison reads no other file and fetches nothing`,
        );
      }
      expect(asked).toEqual([]);
    } finally {
      server.close();
    }
  });
});
