// A newcomer's first steps on a fresh clone, replayed on a copy of this repository with nothing
// installed or built: `npm ci`, then the README's mock section as written (`npx gitea-mock
// sandbox` and its two requests); then what the breaking-change gate advises, `npm version
// minor`, after which `npm ci` must still resolve the workspace (the mock package once kept its
// dependency on the old client version, which npm then looked for in the registry).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { launch } from '../../contract-tests/support/launch.js';
import { cleanCopy, npm, npmEnv, SCRATCH_GIT_ENV } from '../support/scratch-repo.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

let stage: string;
let repo: string;
const git = (args: string[]) => run('git', args, { cwd: repo, env: { ...process.env, ...SCRATCH_GIT_ENV } });
const json = async (file: string) => JSON.parse(await readFile(join(repo, file), 'utf8'));

beforeAll(async () => {
  stage = await mkdtemp(join(tmpdir(), 'gitea-contract-clone-'));
  repo = join(stage, 'repo');
  await cleanCopy(ROOT, repo);
  await git(['init', '--quiet', '--initial-branch', 'main']);
  await git(['add', '--all']);
  await git(['commit', '--quiet', '--message', 'the clone']);
  // With the run's npm cache, as pack.test.ts installs: `.ci/run` starts it empty.
  await npm(['ci', '--no-audit', '--no-fund'], repo);
}, 600_000);

afterAll(async () => {
  if (stage) await rm(stage, { recursive: true, force: true });
});

describe('a fresh clone after npm ci', () => {
  it("`npx gitea-mock sandbox` starts, and answers the README's two requests as it shows", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const block = /```console\n\$ npx gitea-mock sandbox\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const [startLine, ...rest] = block!.trimEnd().split('\n');
    // The two curl commands, then the logins they print.
    const expected = rest.filter((line) => !/^(\$ |\s)/.test(line));
    const mock = await launch('npx', ['gitea-mock', 'sandbox', '--port', '0'], npmEnv(), 60_000, repo);
    try {
      const origin = new URL(mock.baseUrl).origin;
      expect(mock.output()).toContain(startLine!.replace('http://127.0.0.1:4010', origin));
      const headers = { Authorization: 'token dev', 'Content-Type': 'application/json' };
      const renamed = await fetch(`${mock.baseUrl}/admin/users/bob/rename`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ new_username: 'robert' }),
      });
      expect(renamed.status).toBe(204);
      const members = (await (await fetch(`${mock.baseUrl}/teams/12001/members`, { headers })).json()) as {
        login: string;
      }[];
      expect(members.map((user) => user.login)).toEqual(expected);
      expect(expected).toEqual(['alice', 'robert', 'carol']);
    } finally {
      // npx itself ends by the signal, the mock behind it by its own handler.
      await mock.stop();
    }
  });

  // Two runs of the gate (redocly diff each), npm version and npm ci: about 12 s alone, and over
  // 30 s beside the package suite's compilers; bound against a hang only.
  it("the breaking-change gate's advice (npm version minor) moves gitea-mock and its dependency along, and npm ci still resolves", {
    timeout: 300_000,
  }, async () => {
    // A breaking change to the document: a value taken from repoAddCollaborator's permission.
    const base = (await git(['rev-parse', 'HEAD'])).stdout.trim();
    const path = join(repo, 'openapi.yaml');
    const doc = parseDocument(await readFile(path, 'utf8'));
    doc.setIn(
      ['components', 'schemas', 'AddCollaboratorOption', 'properties', 'permission', 'enum'],
      doc.createNode(['read', 'write', null]),
    );
    await writeFile(path, doc.toString());
    await git(['commit', '--quiet', '--all', '--message', 'admin is no longer a permission']);
    const gate = () =>
      npm(['run', '-s', 'check:breaking', '--', base], repo).then(
        () => '',
        (failure: { stdout?: string }) => failure.stdout ?? String(failure),
      );
    const advice = /raise it to ([\d.]+) or later \((npm version \w+)\)/.exec(await gate());
    expect(advice?.[2]).toBe('npm version minor');
    const next = advice![1]!;
    await npm(advice![2]!.split(' ').slice(1), repo, SCRATCH_GIT_ENV);
    const [client, mock, lock] = await Promise.all([
      json('package.json'),
      json('mock/package.json'),
      json('package-lock.json'),
    ]);
    expect([client.version, mock.version, mock.dependencies['gitea-contract']]).toEqual([next, next, next]);
    expect([lock.version, lock.packages[''].version, lock.packages.mock.version]).toEqual([next, next, next]);
    expect(lock.packages.mock.dependencies['gitea-contract']).toBe(next);
    // One commit and one tag, holding the three files.
    const { stdout: changed } = await git(['show', '--name-only', '--format=%s', 'HEAD']);
    expect(changed.trim().split('\n')).toEqual([next, '', 'mock/package.json', 'package-lock.json', 'package.json']);
    expect((await git(['tag', '--list'])).stdout.trim()).toBe(`v${next}`);
    // The gate now asks only for the CHANGELOG line.
    const after = await gate();
    expect(after).toContain('no line added to CHANGELOG.md');
    expect(after).not.toContain('raise it to');
    // What failed with E404: npm ci resolving the workspace's dependency on the client (the
    // packages themselves are what npm ci above installed).
    await expect(npm(['ci', '--dry-run', '--no-audit', '--no-fund'], repo)).resolves.toMatch(/up to date/);
  });
});
