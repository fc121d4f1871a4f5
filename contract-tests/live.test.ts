// Live mode (`npm run test:live`) against a server that conforms (the mock) and against a
// deliberately broken one: every planted mismatch must be reported under its operation.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MOCK_VERSION } from '../scripts/mock/version.js';

const LIVE = fileURLToPath(new URL('../dist/live/cli.mjs', import.meta.url));
const IDS = ['--repo', 'acme/rocket', '--key-id', '11001', '--team-id', '12001', '--comment-id', '15001', '--workflow', 'build.yml', '--package', 'acme/npm/rocket-sdk'];

function live(args: string[], env: Record<string, string> = { GITEA_TOKEN: 'live-test-token' }): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LIVE, ...args], { env: { ...process.env, GITEA_TOKEN: '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, out: stdout + stderr });
    });
  });
}

/** The lines live mode printed for one operation: its result line and the indented problems. */
function section(out: string, operationId: string): string {
  const lines = out.split('\n');
  const start = lines.findIndex((line) => line.slice(2).startsWith(`${operationId} `));
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('    '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

const ORG = { id: 2001, name: 'acme', full_name: 'Acme Rockets', username: 'acme', visibility: 'public' };
const ATTACHMENT = { id: 13001, name: 'gitea-contract-live-check.txt', size: 35, download_count: 0, uuid: 'u', browser_download_url: 'https://h/x', created_at: '2026-05-04T10:00:00Z' };

/** Answers each read operation, some of them wrongly on purpose. */
function brokenServer(): Server {
  return createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers });
      res.end(text);
    };
    const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api\/v1/, '');
    req.resume();
    if (path === '/version') return send(200, { version: '1.27.1' });
    if (path === '/admin/orgs') return send(200, [ORG]); // planted: no X-Total-Count
    if (path === '/repos/acme/rocket/keys/11001') return send(200, { id: '11001', title: 'ci-runner', read_only: true }); // planted: id is a string
    if (path === '/teams/12001/members') return send(418, { message: "I'm a teapot", url: 'x' }); // planted: undeclared status
    if (path === '/repos/acme/rocket/actions/workflows/build.yml') return send(200, 'name: build', { 'content-type': 'text/plain' }); // planted: undeclared media type
    if (path === '/packages/acme/npm/rocket-sdk') return send(200, [], { 'x-total-count': '0' });
    if (path === '/repos/acme/rocket/issues/comments/15001/assets') return send(200, []);
    if (path === '/markdown') return send(200, '<h1>Contract check</h1>\n', { 'content-type': 'text/html; charset=utf-8' });
    if (path === '/repos/acme/scratch/releases') return send(200, [{ id: 14001 }]);
    if (path === '/repos/acme/scratch/releases/14001/assets') return send(201, { ...ATTACHMENT, size: '35 bytes' }); // planted: size is a string
    if (path === '/repos/acme/scratch/collaborators/bob') return send(204, '');
    return send(404, { errors: null, message: 'not found', url: 'x' });
  });
}

describe('npm run test:live', () => {
  let server: Server;
  let broken: string;
  beforeAll(async () => {
    server = brokenServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    broken = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reports no mismatch for a conforming server and exits 0', async () => {
    const { code, out } = await live(['--base-url', inject('mockBaseUrl'), ...IDS]);
    expect(out).toContain(`server: Gitea ${MOCK_VERSION}\n`);
    expect(out).toContain('7 operations checked, 0 with mismatches');
    expect(out).not.toContain('✗');
    expect(code).toBe(0);
  });

  it('reports each planted mismatch under its operation and exits 1', async () => {
    const { code, out } = await live(['--base-url', broken, ...IDS]);
    expect(out).toContain('server: Gitea 1.27.1\n');
    expect(section(out, 'adminGetAllOrgs')).toMatch(/✗[\s\S]*header X-Total-Count is required but missing/);
    expect(section(out, 'repoGetKey')).toMatch(/✗[\s\S]*body \/id must be integer/);
    expect(section(out, 'orgListTeamMembers')).toMatch(/✗ orgListTeamMembers +418[\s\S]*status 418 is not declared/);
    expect(section(out, 'ActionsGetWorkflow')).toMatch(/✗[\s\S]*content type text\/plain is not declared/);
    for (const conforming of ['listPackageVersions', 'issueListIssueCommentAttachments', 'renderMarkdown']) expect(section(out, conforming)).toMatch(/^✓/);
    expect(out).toContain('7 operations checked, 4 with mismatches');
    expect(code).toBe(1);
  });

  it('runs writes only with --allow-writes, inside the scratch repository, and checks them too', async () => {
    const { code, out } = await live(['--base-url', broken, '--allow-writes', '--scratch-repo', 'acme/scratch', '--collaborator', 'bob', ...IDS]);
    expect(section(out, 'repoAddCollaborator')).toMatch(/^✓ repoAddCollaborator +204 conforms/);
    expect(section(out, 'repoCreateReleaseAttachment')).toMatch(/✗[\s\S]*body \/size must be integer/);
    expect(section(out, 'repoEditHook')).toMatch(/skipped: the scratch repository has no webhook/);
    expect(code).toBe(1);
  });

  it('refuses --allow-writes without a scratch repository, and a missing --base-url', async () => {
    expect((await live(['--base-url', broken, '--allow-writes'])).code).toBe(2);
    const { code, out } = await live([]);
    expect(code).toBe(2);
    expect(out).toContain('--base-url is required');
  });
});
