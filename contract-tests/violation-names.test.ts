// A field a new Gitea release adds, a required one it drops, a value no enum of the document
// allows: each violation names the field and where it is (a JSON pointer into the body), in live
// mode's report, in the proxy's lines and X-Contract-Violations count, and in the proxy's JSON
// report. Both run as users run them, from the built bin, against one local upstream. A body with
// more problems than are listed says how many were left out, and every count counts them all.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch } from './support/launch.js';
import { close, listen } from './support/upstream.js';
import { SEED_IDS } from './support/seed-ids.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const TOKEN = 'tok_names_SECRET_77c1';

const ORG = { id: 2001, name: 'acme', full_name: 'Acme Rockets', username: 'acme', visibility: 'public' };
const KEY = {
  id: 11001,
  key_id: 0,
  title: 'ci-runner',
  read_only: true,
  fingerprint: 'SHA256:abc',
  created_at: '2026-05-04T10:00:00Z',
};
const WORKFLOW = { id: 'build.yml', name: 'build', path: '.gitea/workflows/build.yml', state: 'paused' };

/** What each planted answer must be reported as: the operation, its path below /api/v1, and its lines. */
const PLANTED = [
  {
    operationId: 'repoGetKey',
    path: '/repos/acme/rocket/keys/11001',
    lines: ['body /shiny_new_field: unexpected field (not in the document)'],
  },
  {
    operationId: 'adminGetAllOrgs',
    path: '/admin/orgs?limit=5',
    lines: ['body /1/shiny_new_field: unexpected field (not in the document)'],
  },
  // Inside `oneOf: [Repository, null]`: the field alone, not "must be null" and "must match exactly one schema".
  {
    operationId: 'listPackageVersions',
    path: '/packages/acme/npm/rocket-sdk',
    lines: ['body /0/repository/shiny_new_field: unexpected field (not in the document)'],
  },
  {
    operationId: 'orgListTeamMembers',
    path: '/teams/12001/members?limit=5',
    lines: ['body /message: missing (required by the document)'],
  },
  {
    operationId: 'ActionsGetWorkflow',
    path: '/repos/acme/rocket/actions/workflows/build.yml',
    lines: ['body /state: "paused" is not an allowed value (allowed: "active", "disabled_manually")'],
  },
];

/** Nine attachments, each with a field the document does not know: six are listed, and a seventh line says three more were left out. */
const CROWDED = {
  operationId: 'issueListIssueCommentAttachments',
  path: '/repos/acme/rocket/issues/comments/15001/assets',
  count: 9,
  lines: [
    ...[0, 1, 2, 3, 4, 5].map((index) => `body /${index}/shiny_new_field: unexpected field (not in the document)`),
    'body: 3 more problems, not listed (at most 6 are listed per body)',
  ],
};

/** The upstream: a Gitea whose answers break the document in the ways PLANTED names. */
function answer(path: string, res: ServerResponse): void {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers }).end(JSON.stringify(body));
  };
  if (path === '/api/v1/version') return void json(200, { version: '1.28.0' });
  if (path === '/api/v1/repos/acme/rocket/keys/11001') return void json(200, { ...KEY, shiny_new_field: true });
  if (path === '/api/v1/admin/orgs')
    return void json(200, [ORG, { ...ORG, id: 2002, name: 'zeta', username: 'zeta', shiny_new_field: 'x' }], {
      'x-total-count': '2',
    });
  if (path === '/api/v1/packages/acme/npm/rocket-sdk')
    return void json(
      200,
      [{ id: 1, name: 'rocket-sdk', type: 'npm', version: '1.0.0', repository: { id: 7, shiny_new_field: '' } }],
      { 'x-total-count': '1' },
    );
  if (path === '/api/v1/teams/12001/members')
    return void json(404, { errors: null, url: 'https://gitea.example.org/api/swagger' });
  if (path === '/api/v1/repos/acme/rocket/actions/workflows/build.yml') return void json(200, WORKFLOW);
  if (path === `/api/v1${CROWDED.path}`)
    return void json(
      200,
      Array.from({ length: CROWDED.count }, (_, index) => ({
        id: 13001 + index,
        name: `a${index}.txt`,
        shiny_new_field: index,
      })),
    );
  if (path === '/api/v1/markdown')
    return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Contract check</h1>\n');
  json(404, { errors: null, message: 'not found', url: 'https://gitea.example.org/api/swagger' });
}

let upstream: Awaited<ReturnType<typeof listen>>;
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gitea-contract-names-'));
  upstream = await listen((req, res) => {
    req.resume();
    answer(new URL(req.url ?? '/', 'http://x').pathname, res);
  });
});
afterAll(async () => {
  await close(upstream.server);
  await rm(folder, { recursive: true, force: true });
});

describe('each violation names the field and where it is', () => {
  it('in live mode, under its operation, and in its report', async () => {
    const report = join(folder, 'live-report.json');
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI, 'verify', '--base-url', `${upstream.origin}/api/v1`, ...SEED_IDS, '--report', report],
        { env: { ...process.env, GITEA_TOKEN: TOKEN }, timeout: 30_000 },
        (error, out) => resolve({ code: error ? Number(error.code) : 0, stdout: out }),
      );
    });
    for (const { operationId, lines } of PLANTED) {
      const header = new RegExp(`^✗ ${operationId} +\\d{3} ${lines.length} mismatch`, 'm');
      expect(stdout).toMatch(header);
      const section = stdout
        .slice(stdout.search(header))
        .split('\n')
        .slice(1, 1 + lines.length);
      expect(section, operationId).toEqual(lines.map((line) => `    ${line}`));
    }
    // Counted in full: nine mismatches, of which six are listed and the rest said to be left out.
    expect(stdout).toContain(
      `✗ ${CROWDED.operationId}   200 9 mismatches\n${CROWDED.lines.map((line) => `    ${line}\n`).join('')}`,
    );
    expect(stdout).toContain('7 of 20 operations checked, 6 with mismatches');
    expect(stdout).not.toContain(TOKEN);
    expect(code).toBe(1);
    const written = JSON.parse(await readFile(report, 'utf8')) as {
      operations: Record<string, { mismatches: string[]; violations: Record<string, number> }>;
    };
    for (const { operationId, lines } of PLANTED)
      expect(written.operations[operationId]?.mismatches, operationId).toEqual(lines);
    expect(written.operations[CROWDED.operationId]).toMatchObject({
      violations: { 'response.body': 9 },
      mismatches: CROWDED.lines,
    });
  });

  it('in the proxy: its line, its X-Contract-Violations count and its report', async () => {
    const report = join(folder, 'report.json');
    const proxy = await launch(process.execPath, [
      CLI,
      'proxy',
      upstream.origin,
      '--port',
      '0',
      '--quiet',
      '--report',
      report,
    ]);
    try {
      for (const { operationId, path, lines } of PLANTED) {
        const answered = await fetch(`${proxy.baseUrl}${path}`, { headers: { authorization: `token ${TOKEN}` } });
        await answered.arrayBuffer();
        expect(answered.headers.get('x-contract-violations'), operationId).toBe(String(lines.length));
        const pathname = new URL(path, 'http://x').pathname;
        await expect
          .poll(() => proxy.output())
          .toContain(
            `gitea-mock: contract: ${operationId} GET /api/v1${pathname}: 1 violation: response ${lines[0]}\n`,
          );
      }
      const crowded = await fetch(`${proxy.baseUrl}${CROWDED.path}`, { headers: { authorization: `token ${TOKEN}` } });
      await crowded.arrayBuffer();
      expect(crowded.headers.get('x-contract-violations')).toBe('9');
      await expect
        .poll(() => proxy.output())
        .toContain(
          `gitea-mock: contract: ${CROWDED.operationId} GET /api/v1${CROWDED.path}: 9 violations: ${CROWDED.lines.map((line) => `response ${line}`).join('; ')}\n`,
        );
      expect(await proxy.stop('SIGTERM')).toBe(0);
      const written = JSON.parse(await readFile(report, 'utf8')) as {
        operations: Record<string, { messages: Record<string, number>; violations: Record<string, number> }>;
      };
      for (const { operationId, lines } of PLANTED) {
        expect(written.operations[operationId]?.messages, operationId).toEqual(
          Object.fromEntries(lines.map((line) => [`response ${line}`, 1])),
        );
      }
      expect(written.operations[CROWDED.operationId]).toMatchObject({
        withViolations: 1,
        violations: { 'response.body': 9 },
      });
      expect(JSON.stringify(written) + proxy.output()).not.toContain(TOKEN);
    } finally {
      await proxy.stop('SIGKILL');
    }
  });
});
