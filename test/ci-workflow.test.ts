// .github/workflows/ci.yml, this repository's CI for it and its forks, must be a workflow GitHub
// accepts, say that it runs files no package ships, and do what the README says: lint the document, run the breaking-change gate on pull requests against their
// base with the whole history, and run the tests on Node 20, 22 and 24. It is checked against
// GitHub's workflow schema by @action-validator/core (WebAssembly, offline), and its steps are
// read as data: each `npm run` names a script of package.json, each action is pinned to a commit.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { validateWorkflow } from '@action-validator/core';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = new URL('..', import.meta.url);
const text = await readFile(new URL('.github/workflows/ci.yml', ROOT), 'utf8');
const scripts = (
  JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> }
).scripts;

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  strategy?: { matrix?: { node?: unknown[] } };
  steps: Step[];
}
// Duplicate keys are errors (the parser's default), as a second `steps:` would silently win.
const workflow = parse(text, { prettyErrors: true }) as {
  on: Record<string, unknown>;
  permissions: unknown;
  jobs: Record<string, Job>;
};
const jobs = Object.values(workflow.jobs);
const steps = jobs.flatMap((job) => job.steps);

/** The job whose steps include a `run` matching `pattern`. */
function jobRunning(pattern: RegExp): Job {
  const job = jobs.find((candidate) => candidate.steps.some((step) => pattern.test(step.run ?? '')));
  if (!job) throw new Error(`no job runs ${pattern}`);
  return job;
}

/** The README's section on CI. */
async function readmeSection(): Promise<string> {
  const readme = await readFile(new URL('README.md', ROOT), 'utf8');
  const start = readme.indexOf('## Using the kit in CI');
  expect(start).toBeGreaterThan(0);
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

/** The index of the first step of `job` whose `run` matches `pattern`, -1 when none does. */
const indexOf = (job: Job, pattern: RegExp): number => job.steps.findIndex((step) => pattern.test(step.run ?? ''));

describe('.github/workflows/ci.yml', () => {
  it("is a workflow by GitHub's schema", () => {
    expect(validateWorkflow(text).errors).toEqual([]);
  });

  it('the schema check finds a broken copy (a misspelt key, a trigger that does not exist)', () => {
    expect(validateWorkflow(text.replace('runs-on:', 'run-on:')).errors).not.toEqual([]);
    expect(validateWorkflow(text.replace('pull_request:', 'pull_reqest:')).errors).not.toEqual([]);
  });

  it('runs on push and on pull requests, reading the repository only', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(workflow.permissions).toEqual({ contents: 'read' });
  });

  it('installs with npm ci, then lints the document', () => {
    const job = jobRunning(/^npm run lint$/);
    expect(indexOf(job, /^npm ci$/)).toBeGreaterThanOrEqual(0);
    expect(indexOf(job, /^npm ci$/)).toBeLessThan(indexOf(job, /^npm run lint$/));
  });

  it('runs the breaking-change gate on pull requests only, against the base branch, with the whole history', () => {
    const job = jobRunning(/npm run check:breaking/);
    const gate = job.steps[indexOf(job, /npm run check:breaking/)]!;
    expect(gate.if).toBe("github.event_name == 'pull_request'");
    // The base branch comes through the environment, never pasted into the script.
    expect(gate.run).toBe('npm run check:breaking -- "origin/$BASE_REF"');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, not a template
    expect(gate.env).toEqual({ BASE_REF: '${{ github.base_ref }}' });
    const checkout = job.steps.find((step) => step.uses?.startsWith('actions/checkout@'));
    expect(checkout?.with?.['fetch-depth']).toBe(0);
    expect(indexOf(job, /^npm ci$/)).toBeLessThan(indexOf(job, /npm run check:breaking/));
  });

  it('runs npm test and npm run test:dist on Node 20, 22 and 24', () => {
    const job = jobRunning(/^npm test$/);
    expect(job.strategy?.matrix?.node).toEqual([20, 22, 24]);
    const setup = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, not a template
    expect(setup?.with?.['node-version']).toBe('${{ matrix.node }}');
    expect(indexOf(job, /^npm ci$/)).toBeLessThan(indexOf(job, /^npm test$/));
    expect(indexOf(job, /^npm test$/)).toBeLessThan(indexOf(job, /^npm run test:dist$/));
  });

  it('is what .ci/run runs too: npm test, then npm run test:dist', async () => {
    const script = await readFile(new URL('.ci/run', ROOT), 'utf8');
    const commands = script.split('\n').filter((line) => /^time npm /.test(line));
    expect(commands).toEqual(['time npm ci', 'time npm test', 'time npm run test:dist']);
  });

  it('names only scripts package.json has, and pins every action to a commit', () => {
    const named = steps.flatMap((step) =>
      [...(step.run ?? '').matchAll(/npm run (?:-s )?([\w:-]+)/g)].map((match) => match[1]!),
    );
    expect(named.length).toBeGreaterThan(1);
    expect(named.filter((name) => !(name in scripts))).toEqual([]);
    const actions = steps.flatMap((step) => (step.uses ? [step.uses] : []));
    expect(actions.length).toBeGreaterThan(1);
    expect(actions.filter((uses) => !/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/.test(uses))).toEqual([]);
  });

  it('is the one the README\'s "Using the kit in CI" points at, with the gate\'s command as written there', async () => {
    const section = await readmeSection();
    expect(section).toContain('[`.github/workflows/ci.yml`](.github/workflows/ci.yml)');
    expect(section).toContain('npm run check:breaking -- "origin/$BASE_REF"');
  });

  it("the README's live-mode job is valid too, with its token from a secret and options live mode has", async () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(await readmeSection())?.[1];
    expect(block).toBeDefined();
    const lines = block!.split('\n').map((line) => line.replace(/^ {2}/, ''));
    const wrapped = `on: push\njobs:\n${lines.map((line) => `  ${line}`).join('\n')}`;
    expect(validateWorkflow(wrapped).errors).toEqual([]);
    const job = (parse(wrapped) as { jobs: Record<string, Job> }).jobs.live!;
    const verify = job.steps.find((step) => /gitea-mock verify/.test(step.run ?? ''))!;
    expect(verify.env?.GITEA_TOKEN).toMatch(/^\$\{\{ secrets\.\w+ \}\}$/);
    // Each option it passes is one the built `gitea-mock verify --help` lists.
    const { stdout: help } = await promisify(execFile)(process.execPath, [
      fileURLToPath(new URL('mock/dist/cli.mjs', ROOT)),
      'verify',
      '--help',
    ]);
    const options = verify.run!.match(/--[a-z-]+/g) ?? [];
    // A job that checked two reads of seven must not pass.
    expect(options).toContain('--fail-on-skip');
    for (const option of options) expect(help).toMatch(new RegExp(`^ +${option} `, 'm'));
  });

  it('says it is for this repository and its forks: the scripts its steps run ship in neither package', async () => {
    expect(text.split('\n', 2)[0]).toBe(
      "# This repository's CI on GitHub Actions, for it and its forks: lint the document, refuse a pull",
    );
    expect(await readmeSection()).toContain("is this repository's CI, for it and its");
    const manifests = await Promise.all(
      ['package.json', 'mock/package.json'].map(
        async (file) => JSON.parse(await readFile(new URL(file, ROOT), 'utf8')) as { files: string[] },
      ),
    );
    const shipped = (path: string) =>
      manifests.some(({ files }) => files.some((entry) => !entry.startsWith('!') && path.startsWith(entry)));
    // The files the workflow's npm scripts run, as their command lines name them.
    const named = steps.flatMap((step) =>
      [...(step.run ?? '').matchAll(/npm run (?:-s )?([\w:-]+)/g)].map((m) => m[1]!),
    );
    const files = named.flatMap((name) => scripts[name]!.match(/\bscripts\/[\w-]+\.mjs\b/g) ?? []);
    expect(files).toContain('scripts/check-breaking.mjs');
    expect(files.filter(shipped)).toEqual([]);
  });

  it("the README's live-mode job needs the packages alone: it installs gitea-mock and runs its bin", async () => {
    const block = /```yaml\n([\s\S]*?)```/.exec(await readmeSection())![1]!;
    const runs = [...block.matchAll(/^\s*- run: (.+)$/gm)].map(([, command]) => command!);
    expect(runs.map((command) => command.split(' ').slice(0, 2).join(' '))).toEqual(['npm install', 'npx gitea-mock']);
    expect(runs[0]).toMatch(/ gitea-mock( |$)/);
    expect(block).not.toMatch(/npm run |scripts\/|redocly/);
  });
});
