// The server profiles (profiles/*.yaml): each overlay applies with every action selecting
// something, Redocly's bundle of it is what the overlay says, the result and the overlay lint
// clean under the project's rules, its examples validate, the operations a server lacks are gone
// and the fields it adds are there; docs/profiles.md is the table the overlays make.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isObject, type JsonObject, listOperations, listWebhooks } from './support/mock-internals.js';
import { applyOverlay } from '../scripts/overlay.mjs';
import {
  buildProfiles,
  loadBase,
  loadProfiles,
  profileTable,
  unmatchedActions,
  type Profile,
} from '../scripts/profiles.mjs';
import { exampleChecks } from './support/examples.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const run = promisify(execFile);

const base = await loadBase();
const profiles = await loadProfiles();
const byName = new Map(profiles.map((p) => [p.name, p]));

let out = '';
const bundled = new Map<string, JsonObject>();
let lintOutput: { ok: boolean; text: string }[] = [];
/** Why the build refused, if it did (an action selecting nothing): the tests below say which. */
let buildError: unknown;

/** Runs `redocly lint` on some files with the project's redocly.yaml; never rejects. */
async function lint(files: string[]): Promise<{ ok: boolean; text: string }> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    const { stdout, stderr } = await run(process.execPath, [REDOCLY, 'lint', ...files], {
      cwd: ROOT,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { ok: true, text: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, text: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'gitea-contract-profiles-'));
  let files: string[] = [];
  try {
    files = await buildProfiles(out);
  } catch (error) {
    buildError = error;
    return;
  }
  for (const file of files) {
    const name = file.slice(out.length + 1, -'.json'.length);
    bundled.set(name, JSON.parse(await readFile(file, 'utf8')) as JsonObject);
  }
  // Two processes, each a share of the files: the lint of a document is most of the suite's time.
  const all = [...files, ...profiles.map((p) => p.file)];
  const halves = [all.filter((_, i) => i % 2 === 0), all.filter((_, i) => i % 2 === 1)];
  lintOutput = await Promise.all(halves.map(lint));
}, 180_000);

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

const operationIds = (doc: JsonObject): string[] =>
  listOperations(doc)
    .map((o) => String(o.operation.operationId))
    .sort();

function schemaProperties(doc: JsonObject, name: string): string[] {
  const schemas = (doc.components as JsonObject).schemas as JsonObject;
  const schema = schemas[name];
  return isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
}

function headerNames(doc: JsonObject, webhook: string): string[] {
  const op = listWebhooks(doc).find((w) => w.path === webhook);
  const params = (op?.operation.parameters ?? []) as JsonObject[];
  return params.map((p) => {
    if (typeof p.$ref !== 'string') return String(p.name);
    const name = p.$ref.split('/').at(-1) as string;
    return String((((doc.components as JsonObject).parameters as JsonObject)[name] as JsonObject).name);
  });
}

const profile = (name: string): Profile => {
  const p = byName.get(name);
  if (!p) throw new Error(`no profile ${name}`);
  return p;
};
const doc = (name: string): JsonObject => {
  const d = bundled.get(name);
  if (!d) throw new Error(`profile ${name} was not bundled`);
  return d;
};

describe('server profiles', () => {
  it('cover the Gitea minors and Forgejo majors whose source was read', () => {
    expect(profiles.map((p) => p.name)).toEqual([
      'gitea-1.24',
      'gitea-1.25',
      'gitea-1.26',
      'gitea-1.27',
      'forgejo-11',
      'forgejo-12',
    ]);
  });

  it('lint clean, documents and overlays, under the project redocly.yaml', () => {
    expect(buildError).toBeUndefined();
    expect(lintOutput).toHaveLength(2);
    for (const { ok, text } of lintOutput) {
      expect(text).not.toMatch(/\[\d+\] /); // a numbered problem
      expect(ok, text).toBe(true);
    }
  });

  it('an action whose target selects nothing is found', () => {
    const stale = {
      actions: [
        { target: '$.components.schemas.User.properties.login', update: { description: 'x' } },
        { target: '$.components.schemas.User.properties.no_such_field', remove: true },
      ],
    };
    expect(unmatchedActions(base, stale)).toEqual([
      { index: 1, target: '$.components.schemas.User.properties.no_such_field' },
    ]);
  });

  for (const p of profiles) {
    describe(p.name, () => {
      it('every action selects something, and cites a source and a summary', () => {
        expect(unmatchedActions(base, p.overlay)).toEqual([]);
        for (const action of p.overlay.actions) {
          expect(action.description, action.target).toMatch(/\S/);
          expect(action['x-summary'], action.target).toMatch(/\S/);
        }
      });

      it("Redocly's bundle is the overlay applied to openapi.yaml", () => {
        expect(doc(p.name)).toEqual(applyOverlay(base, p.overlay).document);
      });

      it('every example validates against its schema', () => {
        const d = doc(p.name);
        const checks = exampleChecks(d);
        expect(checks.error).toBeUndefined();
        const problems = [
          ...listOperations(d).flatMap((op) => checks.operation(op)),
          ...listWebhooks(d).flatMap((op) => checks.operation(op, true)),
          ...checks.components(),
        ];
        expect(problems).toEqual([]);
      });
    });
  }

  it('gitea-1.27 is the base document with only its name added', () => {
    const d = doc('gitea-1.27');
    expect(d.info).toEqual({ ...(base.info as JsonObject), 'x-profile': 'gitea-1.27' });
    expect({ ...d, info: base.info }).toEqual(base);
  });

  it('the operations a server has no route for are absent', () => {
    const all = operationIds(base);
    const without = (...ids: string[]) => all.filter((id) => !ids.includes(id));
    expect(all).toHaveLength(20);
    for (const name of ['gitea-1.24', 'gitea-1.25', 'gitea-1.26'])
      expect(operationIds(doc(name)), name).toEqual(without('issueRemoveAssignees'));
    for (const name of ['forgejo-11', 'forgejo-12'])
      expect(operationIds(doc(name)), name).toEqual(
        without('issueRemoveAssignees', 'listPackageVersions', 'ActionsGetWorkflow'),
      );
  });

  it('the event types a server never sends are absent, and the others stay', () => {
    const all = Object.keys(base.webhooks as JsonObject).sort();
    const without = (...names: string[]) => all.filter((n) => !names.includes(n));
    expect(all).toHaveLength(26);
    const webhooks = (name: string) => Object.keys(doc(name).webhooks as JsonObject).sort();
    // Without E4, issue_assign still comes from the server's other routes.
    for (const name of ['gitea-1.25', 'gitea-1.26', 'gitea-1.27']) expect(webhooks(name), name).toEqual(all);
    expect(webhooks('gitea-1.24')).toEqual(without('workflow_run'));
    for (const name of ['forgejo-11', 'forgejo-12'])
      expect(webhooks(name), name).toEqual(without('status', 'workflow_run', 'workflow_job'));
  });

  it('Forgejo records carry the fields Forgejo adds, and lack those it does not send', () => {
    for (const name of ['forgejo-11', 'forgejo-12']) {
      const d = doc(name);
      expect(schemaProperties(d, 'User')).toContain('pronouns');
      expect(schemaProperties(d, 'Repository')).toEqual(
        expect.arrayContaining(['wiki_branch', 'globally_editable_wiki']),
      );
      expect(schemaProperties(d, 'Repository')).not.toContain('has_code');
      expect(schemaProperties(d, 'Hook')).toEqual(expect.arrayContaining(['url', 'content_type', 'metadata']));
      expect(schemaProperties(d, 'Hook')).not.toContain('name');
      expect(schemaProperties(d, 'Attachment')).toContain('type');
      expect(schemaProperties(d, 'PullRequest')).toContain('flow');
      expect(schemaProperties(d, 'Release')).toEqual(
        expect.arrayContaining(['hide_archive_links', 'archive_download_count']),
      );
      expect(schemaProperties(d, 'IssuePayload')).toContain('label');
      expect(schemaProperties(d, 'Issue')).not.toContain('time_estimate');
      expect((((d.components as JsonObject).schemas as JsonObject).PackageType as JsonObject).enum).toContain('alt');
      const examples = (d.components as JsonObject).examples as JsonObject;
      expect(((examples.HookEdited as JsonObject).value as JsonObject).url).toBe('https://ci.example.net/hooks/gitea');
      const upload = listOperations(d).find((o) => o.operation.operationId === 'repoCreateReleaseAttachment');
      expect(((upload?.operation.parameters ?? []) as JsonObject[]).map((q) => q.name)).toContain('external_url');
    }
  });

  it('Forgejo deliveries carry X-Forgejo-* headers and no installation target type', () => {
    for (const name of ['forgejo-11', 'forgejo-12'])
      for (const webhook of Object.keys(doc(name).webhooks as JsonObject)) {
        const headers = headerNames(doc(name), webhook);
        expect(headers).toEqual(
          expect.arrayContaining([
            'X-Forgejo-Delivery',
            'X-Forgejo-Event',
            'X-Forgejo-Event-Type',
            'X-Forgejo-Signature',
          ]),
        );
        expect(headers).not.toContain('X-Gitea-Hook-Installation-Target-Type');
        expect(headers).not.toContain('X-GitHub-Hook-Installation-Target-Type');
      }
    expect(headerNames(doc('gitea-1.24'), 'repository')).toContain('X-Gitea-Hook-Installation-Target-Type');
  });

  it("Forgejo's package deliveries name no event group", () => {
    for (const name of ['forgejo-11', 'forgejo-12']) {
      const op = listWebhooks(doc(name)).find((w) => w.path === 'package');
      const params = (op?.operation.parameters ?? []) as JsonObject[];
      const event = (header: string) =>
        (params.find((q) => q.name === header)?.schema as JsonObject | undefined)?.const;
      for (const header of ['X-Forgejo-Event', 'X-Gitea-Event', 'X-Gogs-Event', 'X-GitHub-Event'])
        expect(event(header), `${name} ${header}`).toBe('');
      expect(event('X-Forgejo-Event-Type')).toBe('package');
    }
  });

  it('older Gitea records lack the fields later minors added', () => {
    expect(schemaProperties(doc('gitea-1.24'), 'Repository')).not.toContain('has_code');
    expect(schemaProperties(doc('gitea-1.25'), 'Repository')).toContain('has_code');
    expect(schemaProperties(doc('gitea-1.25'), 'Repository')).not.toContain('branch_count');
    expect(schemaProperties(doc('gitea-1.26'), 'Repository')).toContain('branch_count');
    expect(schemaProperties(doc('gitea-1.25'), 'Hook')).not.toContain('name');
    expect(schemaProperties(doc('gitea-1.26'), 'Hook')).toContain('name');
    expect(schemaProperties(doc('gitea-1.25'), 'PullRequest')).not.toContain('content_version');
    expect(schemaProperties(doc('gitea-1.24'), 'Issue')).not.toContain('time_estimate');
    expect(schemaProperties(doc('gitea-1.25'), 'Issue')).toContain('time_estimate');
    for (const name of ['gitea-1.24', 'gitea-1.25', 'gitea-1.26', 'forgejo-11', 'forgejo-12'])
      expect(schemaProperties(doc(name), 'Issue'), name).not.toContain('projects');
    expect(schemaProperties(doc('gitea-1.27'), 'Issue')).toContain('projects');
    expect(schemaProperties(doc('gitea-1.26'), 'ActionWorkflowRun')).not.toContain('previous_attempt_url');
    const actions = (name: string, record: string) =>
      (
        ((((doc(name).components as JsonObject).schemas as JsonObject)[record] as JsonObject).properties as JsonObject)
          .action as JsonObject
      ).enum;
    for (const record of ['IssuePayload', 'PullRequestPayload']) {
      for (const name of ['gitea-1.24', 'forgejo-11', 'forgejo-12'])
        expect(actions(name, record), `${name} ${record}`).not.toContain('deleted');
      expect(actions('gitea-1.25', record)).toContain('deleted');
    }
    expect(schemaProperties(doc('gitea-1.27'), 'ActionWorkflowRun')).toContain('previous_attempt_url');
  });

  it('every profile overlay extends the base and names itself', () => {
    for (const p of profiles) {
      expect(p.overlay.overlay).toBe('1.0.0');
      expect(p.overlay.info.title).toBe(p.name);
      expect((doc(p.name).info as JsonObject)['x-profile']).toBe(p.name);
    }
    expect(profile('gitea-1.27').overlay.actions).toHaveLength(1);
  });

  it('docs/profiles.md is the table the overlays make (npm run generate)', async () => {
    expect(await readFile(join(ROOT, 'docs', 'profiles.md'), 'utf8')).toBe(await profileTable());
  });

  it('ship in gitea-mock, which serves them (--server), not in the client', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.exports['./profiles/*']).toBeUndefined();
    expect(pkg.files).toContain('!dist/profiles/');
    expect(pkg.scripts.prepack).not.toContain('scripts/profiles.mjs');
    const mock = JSON.parse(await readFile(join(ROOT, 'mock', 'package.json'), 'utf8'));
    expect(mock.exports['./profiles/*.json']).toBe('./dist/profiles/*.json');
  });
});
