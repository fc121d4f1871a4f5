// The scripts in examples/ run as a reader runs them (`node examples/<name>.mjs`) against the
// mock, with their output and exit code checked, error handling included.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port.mjs';
import { startMockServer, type MockServer } from '../../mock/src/server.js';
import { loadDocument, resolvePointer } from '../support/mock-internals.js';
import { startStallServer } from '../support/stall-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The mock's organizations, in the order it pages through them.
const ORGANIZATIONS = (
  resolvePointer(
    loadDocument(new URL('../../openapi.yaml', import.meta.url)),
    '#/components/examples/OrganizationList/value',
  ) as { name: string }[]
).map((org) => org.name);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let mock: MockServer;
const mockLog: string[] = [];

function runExample(name: string, args: string[] = [], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [join('examples', name), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, GITEA_BASE_URL: mock.baseUrl, GITEA_TOKEN: 'example-token', ...env },
        timeout: 20_000,
      },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/index.js')))
    throw new Error('dist/index.js is missing: run `npm run build` (the pretest of npm test does)');
  mock = await startMockServer({ port: 0, onRequest: (line) => mockLog.push(line) });
});

afterAll(async () => {
  await mock?.close();
});

describe('examples/list-organizations.mjs', () => {
  it('prints every organization, following the pages', async () => {
    const before = mockLog.length;
    const run = await runExample('list-organizations.mjs', ['2']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trim().split('\n');
    expect(lines.pop()).toBe(`${ORGANIZATIONS.length} organizations`);
    expect(lines.map((line) => line.split(' ')[0])).toEqual(ORGANIZATIONS);
    // Two at a time: every page was asked for.
    expect(mockLog.slice(before).filter((line) => line.startsWith('GET /api/v1/admin/orgs 200 '))).toHaveLength(
      Math.ceil(ORGANIZATIONS.length / 2),
    );
  });
});

describe('examples/edit-webhook.mjs', () => {
  it('edits the hook and prints it', async () => {
    const run = await runExample('edit-webhook.mjs', ['acme/rocket', '4001']);
    expect(run).toEqual({
      code: 0,
      stdout: 'hook 4001 (gitea) is active and fires on push, release for main\n',
      stderr: '',
    });
  });

  it.each([
    ['401', /^not signed in \(401\): token is required\. Check GITEA_TOKEN\.\n$/],
    ['403', /^not allowed \(403\): .+\. Hooks need a repository administrator/],
    ['404', /^not found \(404\): no hook 4001 in acme\/rocket, or the repository is hidden from you\.\n$/],
    ['422', /^refused \(422\): .+\n$/],
  ])('handles a %s answer (the mock asked with Prefer)', async (code, message) => {
    const run = await runExample('edit-webhook.mjs', [], { GITEA_PREFER: `code=${code}` });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });

  it('handles a server that cannot be reached', async () => {
    const port = await freePort();
    const run = await runExample('edit-webhook.mjs', [], { GITEA_BASE_URL: `http://127.0.0.1:${port}/api/v1` });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`cannot reach http://127.0.0.1:${port}/api/v1: ECONNREFUSED\n`);
  });

  it('handles a server that never answers', async () => {
    const silent = await startStallServer();
    try {
      const run = await runExample('edit-webhook.mjs', [], { GITEA_BASE_URL: silent.baseUrl, GITEA_TIMEOUT_MS: '300' });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^no answer in time: PATCH \/repos\/\{owner\}\/\{repo\}\/hooks\/\{id\} timed out after 300 ms\n$/,
      );
    } finally {
      await silent.close();
    }
  });
});

describe('examples/upload-release-asset.mjs', () => {
  it('uploads a generated file when none is given', async () => {
    const before = mockLog.length;
    const run = await runExample('upload-release-asset.mjs');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^uploading build-info\.txt \(\d+ bytes\) to release 14001 of acme\/rocket\n/);
    // The mock answers its sample attachment, whatever was sent.
    expect(run.stdout).toContain(
      'attachment 13001: rocket-1.2.0-linux-amd64.tar.gz, 4194304 bytes, https://gitea.example.org/',
    );
    expect(mockLog.slice(before)).toContainEqual(
      expect.stringMatching(/^POST \/api\/v1\/repos\/acme\/rocket\/releases\/14001\/assets 201 /),
    );
  });

  it('uploads the file named on the command line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gitea-contract-upload-'));
    try {
      const file = join(dir, 'rocket.tar.gz');
      await writeFile(file, Buffer.alloc(1234, 1));
      const run = await runExample('upload-release-asset.mjs', [file, 'acme/rocket', '14001']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(
        /^uploading rocket\.tar\.gz \(1234 bytes\) to release 14001 of acme\/rocket\nattachment 13001: /,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the test files of examples/, as a reader runs them', () => {
  // `npx vitest run examples/<name>.test.mjs` in the reader's own project: Vitest's defaults (5 s
  // a test, 10 s a hook), not this repository's config, which gives every suite 30 s. A cold
  // start belongs in a hook with a bound of its own, not in the first test.
  it("each passes under Vitest's default bounds", { timeout: 300_000 }, async () => {
    const files = (await readdir(join(ROOT, 'examples'))).filter((name) => name.endsWith('.test.mjs')).sort();
    expect(files).toEqual(['pull-request-bot.test.mjs', 'slow-and-down.test.mjs', 'team-screen.test.mjs']);
    const dir = await mkdtemp(join(tmpdir(), 'gitea-contract-vitest-defaults-'));
    try {
      const config = join(dir, 'vitest.config.mjs');
      await writeFile(config, 'export default {};\n');
      const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
      const run = await new Promise<Run>((resolve) => {
        const child = execFile(
          process.execPath,
          [vitest, 'run', '--config', config, '--root', ROOT, ...files.map((name) => `examples/${name}`)],
          { cwd: ROOT, env: { ...process.env, CI: '1', NO_COLOR: '1' } },
          (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
        );
      });
      expect(run.stdout.match(/Tests\s+(.*)/)?.[1]).toMatch(/^7 passed/);
      expect(run.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
