// Live mode (`gitea-mock verify`; `npm run test:live` in this repository) against a server that
// conforms (the mock, with the README's own commands) and against a deliberately broken one:
// every planted mismatch must be reported under its operation, in the lines and in the JUnit XML
// and JSON report. Against local servers that refuse, reset, stall, speak no TLS, are no Gitea
// API, refuse the credentials or fall silent after /version, it must stop with exit code 2 and one
// line naming the cause.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MOCK_VERSION, readCredentials, refusedLine } from '../test/support/mock-internals.js';
import { startTlsServer, type TlsServer } from '../test/support/tls-server.js';
import { readJUnit, schemaProblems } from './support/junit.js';
import { launch } from './support/launch.js';
import { SEED_IDS } from './support/seed-ids.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const { verify } = (await import(
  fileURLToPath(new URL('../mock/dist/verify.mjs', import.meta.url))
)) as typeof import('../mock/src/live/verify.js');

type Run = { code: number; out: string; stdout: string; stderr: string };

/**
 * Runs live mode with `env` as its whole environment. `here`: the built `verify` in this process,
 * as the bin calls it (a start of the bin costs far more CPU than a run, and most cases need nothing
 * of a process); `bin`: the built `gitea-mock verify` as users run it, for what only a process
 * has (the README's command, NODE_EXTRA_CA_CERTS read at start); or the bin under another
 * command (a network namespace of its own).
 */
async function live(
  args: string[],
  env: Record<string, string> = { GITEA_TOKEN: 'live-test-token' },
  how: 'here' | 'bin' | string[] = 'here',
): Promise<Run> {
  if (how === 'here') {
    let stdout = '';
    let stderr = '';
    const code = await verify(
      args,
      { GITEA_TOKEN: '', ...env },
      { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
    );
    return { code, out: stdout + stderr, stdout, stderr };
  }
  const [command, ...rest] = [...(how === 'bin' ? [] : how), process.execPath, CLI, 'verify', ...args];
  return new Promise((resolve) => {
    execFile(command!, rest, { env: { ...process.env, GITEA_TOKEN: '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, out: stdout + stderr, stdout, stderr });
    });
  });
}

/** A folder for the files live mode writes, removed when the suite ends. */
const FILES = mkdtempSync(join(tmpdir(), 'gitea-contract-live-'));
afterAll(() => rmSync(FILES, { recursive: true, force: true }));

const READ_CHECKS = [
  'adminGetAllOrgs',
  'listPackageVersions',
  'repoGetKey',
  'orgListTeamMembers',
  'ActionsGetWorkflow',
  'issueListIssueCommentAttachments',
  'renderMarkdown',
];
const WRITE_CHECKS = [
  'repoAddCollaborator',
  'issueRemoveAssignees',
  'repoEditPullRequest',
  'issueEditMilestone',
  'repoEditHook',
  'repoCreateReleaseAttachment',
];

/** The README's commands against the mock (mock/README.md, "Against the mock"): the token, and the arguments after the mock's base URL. */
function readmeCommands(): { token: string; args: string[] }[] {
  const readme = readFileSync(fileURLToPath(new URL('../mock/README.md', import.meta.url)), 'utf8');
  return [
    ...readme.matchAll(
      /^GITEA_TOKEN=(\S+) npx gitea-mock verify --base-url http:\/\/127\.0\.0\.1:4010\/api\/v1 (.+)$/gm,
    ),
  ].map(([, token, args]) => ({ token: token!, args: args!.split(' ') }));
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
const ATTACHMENT = {
  id: 13001,
  name: 'gitea-contract-live-check.txt',
  size: 35,
  download_count: 0,
  uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  browser_download_url: 'https://h/x',
  created_at: '2026-05-04T10:00:00Z',
};

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
    if (path === '/repos/acme/rocket/keys/11001')
      return send(200, { id: '11001', title: 'ci-runner', read_only: true }); // planted: id is a string
    if (path === '/teams/12001/members') return send(418, { message: "I'm a teapot", url: 'x' }); // planted: undeclared status
    if (path === '/repos/acme/rocket/actions/workflows/build.yml')
      return send(200, 'name: build', { 'content-type': 'text/x-"yaml"&<b>' }); // planted: undeclared media type, with markup in it
    // Planted: a token without the package scope; the operation is skipped, not judged.
    if (path === '/packages/acme/npm/rocket-sdk')
      return send(403, {
        message:
          'token does not have at least one of required scope(s), required=[read:package], token scope=read:repository',
        url: 'x',
      });
    if (path === '/repos/acme/rocket/issues/comments/15001/assets') return send(200, []);
    if (path === '/markdown')
      return send(200, '<h1>Contract check</h1>\n', { 'content-type': 'text/html; charset=utf-8' });
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

  it("the README's command against the mock runs every read check, and each conforms", async () => {
    const commands = readmeCommands();
    expect(commands).toHaveLength(2);
    const [read] = commands;
    expect(read!.args).not.toContain('--allow-writes');
    const { code, out } = await live(
      ['--base-url', inject('mockBaseUrl'), ...read!.args],
      { GITEA_TOKEN: read!.token },
      'bin',
    );
    expect(out).toContain(`server: Gitea ${MOCK_VERSION}\n`);
    for (const operationId of READ_CHECKS)
      expect(section(out, operationId)).toMatch(new RegExp(`^✓ ${operationId} +200 conforms$`));
    expect(out).toContain('7 of 20 operations checked, 0 with mismatches');
    expect(code).toBe(0);
  });

  it("the README's headline command against the mock says how many of the 20 operations it checked and why not the rest; --fail-on-skip fails such a run", async () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const headline = /^GITEA_TOKEN=… npx gitea-mock verify --base-url \S+ (.+)$/m.exec(readme)?.[1]?.split(' ');
    expect(headline).toEqual(['--repo', 'acme/rocket']);
    const args = ['--base-url', inject('mockBaseUrl'), ...headline!];
    const [{ code, stdout, stderr }, failing] = await Promise.all([live(args), live([...args, '--fail-on-skip'])]);
    const lastLines = stdout.trimEnd().split('\n').slice(-2);
    expect(lastLines).toEqual([
      '2 of 20 operations checked, 0 with mismatches',
      '18 not checked: 5 lacked an id or a repository (listPackageVersions, repoGetKey, orgListTeamMembers, ActionsGetWorkflow, issueListIssueCommentAttachments); 6 change data: not run without --allow-writes --scratch-repo owner/name; 7 never run by live mode: they change data outside a scratch repository',
    ]);
    expect([code, stderr]).toEqual([0, '']);
    // The same report, then the line that fails the run: every skip the run was asked to avoid.
    expect(failing.stdout).toBe(stdout);
    expect(failing.stderr).toMatch(
      /^gitea-mock verify: 5 operations could not be checked \(--fail-on-skip\): 5 lacked an id or a repository \(the first, listPackageVersions: no package to use: GET \/packages\/acme answered 404 "not found"; give --package owner\/type\/name\)\n$/,
    );
    expect(failing.code).toBe(2);
    // With every id given, nothing is skipped that the run was asked to check: it passes.
    const all = await live(['--base-url', inject('mockBaseUrl'), ...SEED_IDS, '--fail-on-skip']);
    expect(all.stdout).toContain('7 of 20 operations checked, 0 with mismatches\n13 not checked: 6 change data');
    expect([all.code, all.stderr]).toEqual([0, '']);
  });

  it("the README's command with writes against the built sandbox runs every check, writes included, with the ids it gives; with a scratch repository that is not there, it writes nothing and cannot pass", async () => {
    const [, write] = readmeCommands();
    expect(write!.args).toContain('--allow-writes');
    const sandbox = await launch(process.execPath, [CLI, 'sandbox', '--port', '0', '--quiet']);
    try {
      const elsewhere = write!.args.map((arg, at) =>
        write!.args[at - 1] === '--scratch-repo' ? 'alice/contract-scratch' : arg,
      );
      expect(elsewhere).toContain('alice/contract-scratch');
      const [read] = readmeCommands();
      const wrongIds = read!.args.map((arg, at) =>
        ['--key-id', '--team-id'].includes(read!.args[at - 1]!) ? '999999' : arg,
      );
      const [{ code, out }, missing, unknown] = await Promise.all([
        live(['--base-url', sandbox.baseUrl, ...write!.args], { GITEA_TOKEN: write!.token }, 'bin'),
        live(['--base-url', sandbox.baseUrl, ...elsewhere], { GITEA_TOKEN: write!.token }),
        live(['--base-url', sandbox.baseUrl, ...wrongIds], { GITEA_TOKEN: read!.token }),
      ]);
      // Ids that name nothing: those reads answer a conforming 404, which read nothing and is no check.
      for (const operationId of ['repoGetKey', 'orgListTeamMembers']) {
        expect(section(unknown.stdout, operationId)).toMatch(
          new RegExp(
            `^- ${operationId} +skipped: nothing was read: answered 404 (".*" )?\\(what this read names is not there: check the ids and the repository given\\)$`,
          ),
        );
      }
      expect([unknown.code, unknown.stdout]).toEqual([
        0,
        expect.stringContaining('5 of 20 operations checked, 0 with mismatches'),
      ]);
      for (const operationId of [...READ_CHECKS, ...WRITE_CHECKS])
        expect(section(out, operationId)).toMatch(new RegExp(`^✓ ${operationId} +20[014] conforms$`));
      expect(out).toContain('13 of 20 operations checked, 0 with mismatches');
      expect(code).toBe(0);
      // The sandbox has no alice/contract-scratch: each write answers a conforming 404, which wrote nothing.
      for (const operationId of READ_CHECKS)
        expect(section(missing.stdout, operationId)).toMatch(new RegExp(`^✓ ${operationId} +200 conforms$`));
      for (const operationId of WRITE_CHECKS) {
        expect(section(missing.stdout, operationId)).toMatch(
          new RegExp(
            `^- ${operationId} +skipped: nothing was written: answered 404 (".*" )?\\(the scratch repository alice/contract-scratch, or what this write names in it, is not there\\)$`,
          ),
        );
      }
      expect(missing.stdout).toContain('7 of 20 operations checked, 0 with mismatches');
      expect(missing.stderr).toMatch(
        /^gitea-mock verify: no write could be checked in alice\/contract-scratch: 6 lacked an id or a repository \(the first, repoAddCollaborator: nothing was written: answered 404/,
      );
      expect(missing.code).toBe(2);
    } finally {
      await sandbox.stop();
    }
  });

  it('reports each planted mismatch under its operation, in the lines, the JUnit XML and the JSON report, and exits 1', async () => {
    const junit = join(FILES, 'broken.xml');
    const report = join(FILES, 'broken.json');
    const { code, out } = await live(['--base-url', broken, ...SEED_IDS, '--junit', junit, '--report', report]);
    expect(out).toContain('server: Gitea 1.27.1\n');
    expect(section(out, 'adminGetAllOrgs')).toMatch(/✗[\s\S]*header X-Total-Count is required but missing/);
    expect(section(out, 'repoGetKey')).toMatch(/✗[\s\S]*body \/id must be integer/);
    expect(section(out, 'orgListTeamMembers')).toMatch(/✗ orgListTeamMembers +418[\s\S]*status 418 is not declared/);
    expect(section(out, 'ActionsGetWorkflow')).toMatch(/✗[\s\S]*content type text\/x-"yaml"&<b> is not declared/);
    expect(section(out, 'listPackageVersions')).toBe(
      '- listPackageVersions                skipped: the token lacks a scope: answered 403 "token does not have at least one of required scope(s), required=[read:package], token scope=read:repository"',
    );
    for (const conforming of ['issueListIssueCommentAttachments', 'renderMarkdown'])
      expect(section(out, conforming)).toMatch(/^✓/);
    expect(out).toContain('6 of 20 operations checked, 4 with mismatches');
    expect(code).toBe(1);

    const [suite] = readJUnit(readFileSync(junit, 'utf8'));
    expect(await schemaProblems([{ fileName: 'broken.xml', contents: readFileSync(junit, 'utf8') }])).toEqual([]);
    const cases = new Map(suite!.cases.map((testCase) => [testCase.name, testCase]));
    // The server, then every operation of the contract.
    expect(suite!.cases).toHaveLength(21);
    expect(cases.get('server')).toMatchObject({ errors: [], systemOut: 'Gitea 1.27.1' });
    expect(cases.get('adminGetAllOrgs')!.failures).toEqual([
      {
        message: 'header X-Total-Count is required but missing',
        type: 'response.headers',
        text: 'header X-Total-Count is required but missing',
      },
    ]);
    expect(cases.get('repoGetKey')!.failures.map(({ type }) => type)).toEqual(['response.body']);
    expect(cases.get('orgListTeamMembers')!.failures.map(({ type }) => type)).toEqual(['response.status']);
    expect(cases.get('ActionsGetWorkflow')!.failures.map(({ message }) => message)).toEqual([
      'content type text/x-"yaml"&<b> is not declared (declared: application/json)',
    ]);
    expect(cases.get('listPackageVersions')!.skipped).toMatch(
      /^the token lacks a scope: answered 403 "token does not have/,
    );
    expect(cases.get('renderMarkdown')).toMatchObject({ failures: [], skipped: undefined });
    expect(cases.get('repoEditHook')!.skipped).toBe('it writes (use --allow-writes --scratch-repo owner/name)');
    expect(cases.get('repoMigrate')!.skipped).toMatch(/^never run by live mode/);

    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      exitCode: number;
      operations: Record<string, { exchanges: number; withViolations: number; violations: Record<string, number> }>;
      skipped: Record<string, { kind: string }>;
    };
    expect(json.exitCode).toBe(1);
    expect(Object.keys(json.operations).sort()).toEqual([
      'ActionsGetWorkflow',
      'adminGetAllOrgs',
      'issueListIssueCommentAttachments',
      'orgListTeamMembers',
      'renderMarkdown',
      'repoGetKey',
    ]);
    expect(json.operations.adminGetAllOrgs).toMatchObject({
      exchanges: 1,
      withViolations: 1,
      violations: { 'response.headers': 1 },
    });
    expect(json.operations.renderMarkdown).toMatchObject({ exchanges: 1, withViolations: 0, violations: {} });
    expect(json.skipped.listPackageVersions!.kind).toBe('scope');
    expect(json.skipped.repoEditHook!.kind).toBe('writes');
  });

  it('runs writes only with --allow-writes, inside the scratch repository, and checks them too', async () => {
    const { code, out } = await live([
      '--base-url',
      broken,
      '--allow-writes',
      '--scratch-repo',
      'acme/scratch',
      '--collaborator',
      'bob',
      ...SEED_IDS,
    ]);
    expect(section(out, 'repoAddCollaborator')).toMatch(/^✓ repoAddCollaborator +204 conforms/);
    expect(section(out, 'repoCreateReleaseAttachment')).toMatch(/✗[\s\S]*body \/size must be integer/);
    // The cause of a skip is the look-up's answer, and the option that would do without it.
    expect(section(out, 'repoEditHook')).toBe(
      '- repoEditHook                       skipped: no webhook to use: GET /repos/acme/scratch/hooks answered 404 "not found"; give --hook-id',
    );
    expect(code).toBe(1);
  });

  it('refuses a credential given as an option, pointing at the environment, without repeating it', async () => {
    const secret = 'cmdline-SECRET-0b9d2e';
    for (const option of ['--token', '--password', '--username', '--api-key']) {
      const { code, stdout, stderr } = await live(['--base-url', broken, option, secret], {});
      expect(stderr).toMatch(
        new RegExp(
          `^gitea-mock verify: ${option} is not an option: credentials come from the environment only, never the command line .*: set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD \\(and GITEA_OTP for two-factor accounts\\)\n`,
        ),
      );
      expect([code, stdout]).toEqual([2, '']);
      expect(stderr).not.toContain(secret);
    }
    // A bare argument may be a token too: named by what it is, not repeated.
    const bare = await live(['--base-url', broken, secret], {});
    expect(bare.stderr).toMatch(/^gitea-mock verify: an argument that is no option was given /);
    expect(bare.stderr).not.toContain(secret);
    expect(bare.code).toBe(2);
    // Any other unknown option is told as it is.
    expect((await live(['--base-url', broken, '--repository', 'acme/rocket'], {})).stderr).toMatch(
      /^gitea-mock verify: Unknown option '--repository'/,
    );
  });

  it('refuses --allow-writes without a scratch repository, and a missing --base-url', async () => {
    expect((await live(['--base-url', broken, '--allow-writes'])).code).toBe(2);
    const { code, out } = await live([]);
    expect(code).toBe(2);
    expect(out).toContain('--base-url is required');
  });
});

describe('npm run test:live against a server that misbehaves once /version has answered', () => {
  const servers: Server[] = [];
  afterAll(() =>
    Promise.all(
      servers.map(
        (server) =>
          new Promise((resolve) => {
            server.closeAllConnections();
            server.close(resolve);
          }),
      ),
    ),
  );

  /** A Gitea that answers /version, and every other request with `answer`; its base URL. */
  async function gitea(
    answer: (req: IncomingMessage, res: ServerResponse) => void,
    version = '1.27.1',
  ): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      if (req.url === '/api/v1/version')
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ version }));
      else answer(req, res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  }

  it('an endless body: read up to 10 MB, the rest discarded, not checked: a skip with its cause, or the status and header mismatches alone', async () => {
    // Endless as far as live mode can tell; the fence only ends the test should it read on.
    const FENCE = 64 * 1024 * 1024;
    const CHUNK = Buffer.alloc(64 * 1024, ' ');
    const sent: number[] = [];
    const baseUrl = await gitea((_req, res) => {
      let bytes = 0;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      // Written as fast as it is read, no faster: what was sent is what live mode took in.
      const pump = (): void => {
        while (bytes < FENCE) {
          bytes += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', pump);
        }
        res.end(']');
      };
      res.on('close', () => sent.push(bytes));
      pump();
    });
    const report = join(FILES, 'endless.json');
    const { code, out } = await live(['--base-url', baseUrl, '--report', report]);
    // Its status and headers conform, its body could not be read: not checked, so not a mismatch.
    expect(section(out, 'renderMarkdown')).toBe(
      '- renderMarkdown                     skipped: answered 200 with a body larger than 10 MB: not checked (its status and declared headers conform)',
    );
    // A header the server left out is a mismatch all the same, and the body is said to be unchecked, not counted.
    expect(section(out, 'adminGetAllOrgs')).toBe(
      '✗ adminGetAllOrgs                    200 1 mismatch\n    header X-Total-Count is required but missing\n    (body is larger than 10 MB: not checked)',
    );
    // The id lookups read no further either: with no team found, the operation is skipped.
    expect(section(out, 'orgListTeamMembers')).toMatch(
      /skipped: no team to use: GET \/user\/teams answered more than 10 MB; give --team-id$/,
    );
    expect(out).toContain('1 of 20 operations checked, 1 with mismatches');
    expect(code).toBe(1);
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      operations: Record<string, object>;
      skipped: Record<string, { kind: string }>;
    };
    expect(json.operations.adminGetAllOrgs).toMatchObject({
      violations: { 'response.headers': 1 },
      mismatches: ['header X-Total-Count is required but missing'],
      notChecked: 'body is larger than 10 MB: not checked',
    });
    expect(json.skipped.renderMarkdown!.kind).toBe('too-large');
    // Every answer was abandoned far short of the fence: what the sockets held, beyond the 10 MB read.
    // Live mode run in this process lets go of an abandoned answer as it ends, not at once.
    await expect.poll(() => sent.length).toBe(3);
    for (const bytes of sent) expect(bytes).toBeLessThan(FENCE / 2);
  });

  it('credentials refused (401 to every operation): one line naming them, exit 2, nothing more sent; the files say so', async () => {
    const TOKEN = 'Live-EXPIRED-Token-9f2';
    const asked: string[] = [];
    const baseUrl = await gitea((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res
        .writeHead(401, { 'content-type': 'application/json;charset=utf-8' })
        .end(JSON.stringify({ message: 'invalid username, password or token', url: 'http://x/api/swagger' }));
    });
    const junit = join(FILES, 'refused.xml');
    const report = join(FILES, 'refused.json');
    const { code, stdout, stderr } = await live(
      ['--base-url', baseUrl, ...SEED_IDS, '--junit', junit, '--report', report],
      {
        GITEA_TOKEN: TOKEN,
      },
    );
    const line = `gitea-mock verify: ${baseUrl} refused the credentials in GITEA_TOKEN: adminGetAllOrgs answered 401 "invalid username, password or token"`;
    expect(stderr).toBe(`${line}\n`);
    expect(stdout).toBe('');
    expect(code).toBe(2);
    // Stopped at the first refusal: no look-up, no other operation.
    expect(asked).toEqual(['GET /api/v1/admin/orgs?limit=5']);
    const [suite] = readJUnit(readFileSync(junit, 'utf8'));
    expect(await schemaProblems([{ fileName: 'refused.xml', contents: readFileSync(junit, 'utf8') }])).toEqual([]);
    expect(suite!.cases[0]!.errors).toEqual([{ message: line.slice('gitea-mock verify: '.length), type: 'stopped' }]);
    expect(suite!.cases.slice(1).every((testCase) => testCase.skipped !== undefined)).toBe(true);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { exitCode: number; stopped: string; operations: object };
    expect(json).toMatchObject({ exitCode: 2, stopped: line.slice('gitea-mock verify: '.length), operations: {} });
    for (const text of [stdout + stderr, readFileSync(junit, 'utf8'), readFileSync(report, 'utf8')])
      expect(text.toLowerCase()).not.toContain(TOKEN.toLowerCase());
  });

  it('silent after /version: each request times out as such, the run keeps within --timeout, and exits 2', async () => {
    const baseUrl = await gitea(() => {});
    const { code, stdout, stderr } = await live([
      '--base-url',
      baseUrl,
      '--repo',
      'acme/rocket',
      '--timeout',
      '2',
      '--request-timeout',
      '0.4',
    ]);
    expect(section(stdout, 'adminGetAllOrgs')).toBe(
      '- adminGetAllOrgs                    skipped: timed out: no answer within the --request-timeout of 0.4 s',
    );
    // A look-up's time-out is told as one, never as data the server lacks, and with no option to
    // give: an option would not have made the server answer.
    expect(section(stdout, 'listPackageVersions')).toMatch(
      /^- listPackageVersions +(skipped: no package to use: GET \/packages\/acme timed out: (no answer within the --request-timeout of 0\.4 s|the run's --timeout of 2 s ran out)|not run: the run's --timeout of 2 s ran out)$/,
    );
    expect(stdout).not.toContain('; give --');
    expect(section(stdout, 'renderMarkdown')).toMatch(/^- renderMarkdown +(skipped: timed out: |not run: )/);
    expect(stdout).not.toMatch(/listed none|answered \d/);
    expect(stdout).toContain('0 of 20 operations checked, 0 with mismatches');
    expect(stderr).toMatch(
      /^gitea-mock verify: no operation could be checked: 7 ran out of time \(the first, adminGetAllOrgs: timed out: no answer within the --request-timeout of 0\.4 s\)\n$/,
    );
    expect(code).toBe(2);
    // How soon after the 2 s of the run: bench/time-bounds.mjs.
  });

  it('gone after /version (the connection closed, then refused): each operation skipped with its network cause, never a mismatch; exit 2', async () => {
    let server: Server | undefined;
    const asked: string[] = [];
    const baseUrl = await gitea((req) => {
      // The first request after /version has its connection closed, and the server stops
      // listening: every later connection is refused.
      asked.push(`${req.method} ${req.url}`);
      req.socket.destroy();
      server ??= servers.at(-1)!;
      server.close();
    });
    const report = join(FILES, 'gone.json');
    const { code, stdout, stderr } = await live(['--base-url', baseUrl, '--repo', 'acme/rocket', '--report', report]);
    expect(asked).toEqual(['GET /api/v1/admin/orgs?limit=5']);
    expect(section(stdout, 'adminGetAllOrgs')).toMatch(
      /^- adminGetAllOrgs +skipped: the request failed: (UND_ERR_SOCKET \(the connection was closed before an answer\)|ECONNRESET \(the connection was reset before an answer\))$/,
    );
    // A look-up cut off the same way names the cause, and no option: none would have helped.
    expect(section(stdout, 'repoGetKey')).toBe(
      '- repoGetKey                         skipped: no deploy key to use: GET /repos/acme/rocket/keys failed: ECONNREFUSED (the connection was refused: is the server running, on that port?)',
    );
    expect(section(stdout, 'renderMarkdown')).toBe(
      '- renderMarkdown                     skipped: the request failed: ECONNREFUSED (the connection was refused: is the server running, on that port?)',
    );
    expect(stdout).not.toMatch(/^✗|fetch failed|; give --/m);
    expect(stdout).toContain('0 of 20 operations checked, 0 with mismatches');
    expect(stderr).toMatch(
      /^gitea-mock verify: no operation could be checked: 7 got no answer: the connection failed \(the first, adminGetAllOrgs: the request failed: (UND_ERR_SOCKET|ECONNRESET) \(/,
    );
    expect(code).toBe(2);
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      exitCode: number;
      operations: object;
      skipped: Record<string, { kind: string }>;
    };
    expect(json.exitCode).toBe(2);
    expect(json.operations).toEqual({});
    for (const operationId of READ_CHECKS) expect(json.skipped[operationId]!.kind, operationId).toBe('network');
  });

  it('a redirect is judged as the answer, never followed: nothing reaches where it points', async () => {
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'x-total-count': '1' }).end(JSON.stringify([ORG]));
    });
    servers.push(other);
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const asked: string[] = [];
    const baseUrl = await gitea((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/api/v1/admin/orgs')
        return void res.writeHead(302, { location: `${otherOrigin}/api/v1/admin/orgs?limit=5` }).end();
      if (path === '/api/v1/markdown')
        return void res.writeHead(307, { location: `${otherOrigin}/api/v1/markdown` }).end();
      // Gitea's own redirect for a renamed repository, which repoGetKey declares.
      if (path === '/api/v1/repos/acme/rocket/keys/11001') {
        const moved = '/api/v1/repos/acme/rocket-renamed/keys/11001';
        return void res
          .writeHead(301, { location: moved, 'content-type': 'text/html; charset=utf-8' })
          .end(`<a href="${moved}">Moved Permanently</a>.\n\n`);
      }
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: null, message: 'not found', url: 'x' }));
    });
    const { code, out } = await live(['--base-url', baseUrl, '--repo', 'acme/rocket', '--key-id', '11001']);
    expect(section(out, 'adminGetAllOrgs')).toMatch(
      /^✗ adminGetAllOrgs +302 1 mismatch\n {4}status 302 is not declared/,
    );
    expect(section(out, 'renderMarkdown')).toMatch(/^✗ renderMarkdown +307 1 mismatch\n {4}status 307 is not declared/);
    expect(section(out, 'repoGetKey')).toMatch(/^✓ repoGetKey +301 conforms$/);
    expect(elsewhere).toEqual([]);
    expect(asked).not.toContain('GET /api/v1/repos/acme/rocket-renamed/keys/11001');
    expect(code).toBe(1);
  });

  it('a credential the server echoes, in the version or lower-cased in a mismatch, is printed redacted', async () => {
    const TOKEN = 'Live-ECHO-Token-7c41Ab';
    const baseUrl = await gitea(
      (req, res) =>
        res.writeHead(200, { 'content-type': `application/x-${String(req.headers.authorization).slice(6)}` }).end('[]'),
      TOKEN,
    );
    const { out } = await live(['--base-url', baseUrl], { GITEA_TOKEN: TOKEN });
    expect(out).toContain('server: Gitea [REDACTED]\n');
    expect(section(out, 'adminGetAllOrgs')).toContain('content type application/x-[REDACTED] is not declared');
    expect(out.toLowerCase()).not.toContain(TOKEN.toLowerCase());
  });
});

describe('which credentials a refusal names (in-process)', () => {
  const BASE = 'https://gitea.example.org/api/v1';
  const ANSWERED = 'adminGetAllOrgs answered 401 "invalid username, password or token"';

  it.each([
    [{ GITEA_TOKEN: 't0k' }, `${BASE} refused the credentials in GITEA_TOKEN: ${ANSWERED}`],
    [
      { GITEA_TOKEN: 't0k', GITEA_USERNAME: 'alice', GITEA_PASSWORD: 'pw' },
      `${BASE} refused the credentials in GITEA_TOKEN (GITEA_USERNAME and GITEA_PASSWORD, set too but not sent: GITEA_TOKEN goes first): ${ANSWERED}`,
    ],
    [
      { GITEA_USERNAME: 'alice', GITEA_PASSWORD: 'pw' },
      `${BASE} refused the credentials in GITEA_USERNAME and GITEA_PASSWORD: ${ANSWERED}`,
    ],
    [
      { GITEA_USERNAME: 'alice', GITEA_PASSWORD: 'pw', GITEA_OTP: '123456' },
      `${BASE} refused the credentials in GITEA_USERNAME, GITEA_PASSWORD and GITEA_OTP: ${ANSWERED}`,
    ],
    [
      {},
      `${BASE} asks for credentials and none were given (set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): ${ANSWERED}`,
    ],
    [
      { GITEA_USERNAME: 'alice' },
      `${BASE} asks for credentials and none were given (GITEA_USERNAME is set without GITEA_PASSWORD, so neither was sent; set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): ${ANSWERED}`,
    ],
  ])('%j: %s', (env, line) => {
    expect(refusedLine(BASE, readCredentials(env), ANSWERED)).toBe(line);
  });
});

describe('npm run test:live when no Gitea API answers at the base URL', () => {
  const TOKEN = 'live-reachability-SECRET-7c41';
  const servers: (Server | TcpServer)[] = [];
  const sockets = new Set<Socket>();
  afterAll(async () => {
    // Stalled connections would keep a server open: they go first.
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** Listens on a free loopback port until the suite ends; its port. */
  async function listen(server: Server | TcpServer): Promise<number> {
    servers.push(server);
    server.on('connection', (socket: Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** An HTTP server answering every request with `answer`; the paths it was asked for. */
  async function httpServer(
    answer: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<{ port: number; paths: string[] }> {
    const paths: string[] = [];
    const port = await listen(
      createServer((req, res) => {
        paths.push(req.url ?? '');
        req.resume();
        answer(req, res);
      }),
    );
    return { port, paths };
  }

  /** Exit code 2, stderr one line that names the cause, nothing on stdout (no operation run or reported), no credential anywhere. */
  async function expectStopped(
    baseUrl: string,
    cause: RegExp,
    extra: string[] = [],
    inside: string[] = [],
    env: Record<string, string> = {},
  ): Promise<string> {
    // NODE_EXTRA_CA_CERTS is read when a process starts.
    const how = inside.length > 0 ? inside : env.NODE_EXTRA_CA_CERTS ? 'bin' : 'here';
    const { code, stdout, stderr } = await live(
      ['--base-url', baseUrl, ...SEED_IDS, ...extra],
      { GITEA_TOKEN: TOKEN, ...env },
      how,
    );
    expect(stderr.endsWith('\n')).toBe(true);
    const lines = stderr.split('\n').slice(0, -1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(cause);
    expect(stdout).toBe('');
    expect(stdout + stderr).not.toContain(TOKEN);
    expect(code).toBe(2);
    return lines[0]!;
  }

  it('a refused connection: ECONNREFUSED', async () => {
    // A port that was free a moment ago: nothing listens there now.
    const port = await listen(createTcpServer());
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await expectStopped(
      `http://127.0.0.1:${port}/api/v1`,
      /^gitea-mock verify: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1: ECONNREFUSED \(the connection was refused/,
    );
  });

  it('a connection reset once the request arrives: ECONNRESET', async () => {
    let requests = 0;
    const port = await listen(
      createTcpServer((socket) =>
        socket.once('data', () => {
          requests++;
          socket.resetAndDestroy();
        }),
      ),
    );
    await expectStopped(
      `http://127.0.0.1:${port}/api/v1`,
      /^gitea-mock verify: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1: ECONNRESET \(the connection was reset before an answer\)$/,
    );
    expect(requests).toBe(1);
  });

  it.each([
    ['reset', (socket: Socket) => socket.resetAndDestroy()],
    ['closed', (socket: Socket) => socket.destroy()],
  ])(
    'a connection %s as it opens: stopped all the same, by the failure or by the timeout where fetch hangs on it',
    async (_how, end) => {
      // Fetch (Node 20's undici) at times waits forever on such a connection, with nothing left to
      // keep Node running: without a timer of its own, live mode would exit 13 without a word.
      const port = await listen(createTcpServer(end));
      await expectStopped(
        `http://127.0.0.1:${port}/api/v1`,
        /^gitea-mock verify: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1: (ECONNRESET|UND_ERR_SOCKET|ETIMEDOUT) \(/,
        ['--connect-timeout', '1'],
      );
    },
  );

  it('a server that accepts and never answers: a timeout after --connect-timeout', async () => {
    // Also what an unreachable host looks like, without leaving this machine.
    let connections = 0;
    const port = await listen(createTcpServer(() => connections++));
    await expectStopped(
      `http://127.0.0.1:${port}/api/v1`,
      /^gitea-mock verify: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1: ETIMEDOUT \(no answer to GET \/version within 0\.5 s; --connect-timeout waits longer\)$/,
      ['--connect-timeout', '0.5'],
    );
    // Well before the 10 s default, and before the 60 s of an operation: bench/time-bounds.mjs.
    expect(connections).toBe(1);
  });

  it('plain http where https was asked for: the TLS reason', async () => {
    const { port, paths } = await httpServer((_req, res) => res.end('not tls'));
    await expectStopped(
      `https://127.0.0.1:${port}/api/v1`,
      /^gitea-mock verify: cannot reach https:\/\/127\.0\.0\.1:\d+\/api\/v1: TLS failed: (ERR_SSL_WRONG_VERSION_NUMBER|EPROTO) \(wrong version number: does the server speak plain http\?\)$/,
    );
    expect(paths).toEqual([]);
  });

  describe('a certificate Node does not accept', () => {
    const tlsServers: TlsServer[] = [];
    afterAll(() => Promise.all(tlsServers.map((server) => server.close())));
    /** An HTTPS server whose every answer is JSON that is not a version: reaching it stops live mode too, one step later. */
    async function tlsServer(kind: Parameters<typeof startTlsServer>[0]): Promise<TlsServer> {
      const server = await startTlsServer(kind, (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'),
      );
      tlsServers.push(server);
      return server;
    }

    it('self-signed: the TLS reason, and how to trust it', async () => {
      const server = await tlsServer('self-signed');
      const line = await expectStopped(`${server.origin}/api/v1`, /^gitea-mock verify: cannot reach /);
      expect(line).toBe(
        `gitea-mock verify: cannot reach ${server.origin}/api/v1: TLS failed: DEPTH_ZERO_SELF_SIGNED_CERT (self-signed certificate: if you trust the server, set NODE_EXTRA_CA_CERTS to a PEM file of its CA certificate and start again)`,
      );
      expect(server.paths).toEqual([]);
    });

    it('self-signed, with its certificate in NODE_EXTRA_CA_CERTS as the advice says: the request gets through', async () => {
      const server = await tlsServer('self-signed');
      const line = await expectStopped(`${server.origin}/api/v1`, /^gitea-mock verify: no Gitea API at /, [], [], {
        NODE_EXTRA_CA_CERTS: server.caFile,
      });
      expect(line).toBe(
        `gitea-mock verify: no Gitea API at ${server.origin}/api/v1: GET /version answered 200 with JSON {"status":"ok"}, not {"version": "…"}`,
      );
      expect(server.paths).toEqual(['/api/v1/version']);
    });

    it.each([
      ['expired', 'CERT_HAS_EXPIRED (certificate has expired)'],
      ['for another host', "ERR_TLS_CERT_ALTNAME_INVALID (IP: 127.0.0.1 is not in the cert's list)"],
    ] as const)('%s, though trusted: the TLS reason alone, nothing to trust', async (kind, reason) => {
      const server = await tlsServer(kind);
      const line = await expectStopped(`${server.origin}/api/v1`, /^gitea-mock verify: cannot reach /, [], [], {
        NODE_EXTRA_CA_CERTS: server.caFile,
      });
      expect(line).toBe(`gitea-mock verify: cannot reach ${server.origin}/api/v1: TLS failed: ${reason}`);
      expect(server.paths).toEqual([]);
    });
  });

  it.each([
    [
      'an HTML page at every path',
      (res: ServerResponse) =>
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            '<!DOCTYPE html>\n<html><head><title>Sign in - Example Portal</title></head><body>Welcome</body></html>',
          ),
      'answered 200 with an HTML page titled "Sign in - Example Portal"',
    ],
    [
      '404 at every path',
      (res: ServerResponse) =>
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n'),
      'answered 404 with text/plain: "404 page not found"',
    ],
  ])('no Gitea API, %s: what came back instead of a version', async (_name, answer, came) => {
    const { port, paths } = await httpServer((_req, res) => answer(res));
    const line = await expectStopped(
      `http://127.0.0.1:${port}/api/v1`,
      /^gitea-mock verify: no Gitea API at http:\/\/127\.0\.0\.1:\d+\/api\/v1: GET \/version /,
    );
    expect(line).toBe(
      `gitea-mock verify: no Gitea API at http://127.0.0.1:${port}/api/v1: GET /version ${came}, not {"version": "…"}`,
    );
    expect(paths).toEqual(['/api/v1/version']);
  });

  it('a base URL without /api/v1: the web pages answer /version, and the line says which base URL to try', async () => {
    const origin = inject('mockBaseUrl').replace(/\/api\/v1$/, '');
    const line = await expectStopped(`${origin}/`, /^gitea-mock verify: no Gitea API at /);
    expect(line).toBe(
      `gitea-mock verify: no Gitea API at ${origin}/: GET /version answered 404 with JSON {"errors":null,"message":"not found","url":"${origin}/api/swagger"}, not {"version": "…"}; the base URL ${origin} does not end in /api/v1, where Gitea serves its API: try ${origin}/api/v1`,
    );
  });

  it("GET /version answered 401 with no credentials set: says that none were given, as an operation's 401 does", async () => {
    const { port } = await httpServer((_req, res) =>
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: 'token is required', url: 'x' })),
    );
    const line = await expectStopped(`http://127.0.0.1:${port}/api/v1`, /^gitea-mock verify: /, [], [], {
      GITEA_TOKEN: '',
    });
    expect(line).toBe(
      `gitea-mock verify: http://127.0.0.1:${port}/api/v1 asks for credentials and none were given (set GITEA_TOKEN, or GITEA_USERNAME and GITEA_PASSWORD): GET /version answered 401 with JSON {"message":"token is required","url":"x"}`,
    );
  });

  it('no Gitea API, other JSON that echoes the credential: the JSON, with the credential redacted', async () => {
    const { port, paths } = await httpServer((req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'ok', seen: req.headers.authorization })),
    );
    const line = await expectStopped(`http://127.0.0.1:${port}/api/v1`, /^gitea-mock verify: no Gitea API at /);
    expect(line).toBe(
      `gitea-mock verify: no Gitea API at http://127.0.0.1:${port}/api/v1: GET /version answered 200 with JSON {"status":"ok","seen":"[REDACTED]"}, not {"version": "…"}`,
    );
    expect(paths).toEqual(['/api/v1/version']);
  });

  // An unreachable host, for real, without reaching the network: live mode runs in a network
  // namespace of its own (util-linux `unshare`), which has no interface up and so no route
  // anywhere: connecting fails at once, and no name can be looked up.
  const OFFLINE = ['unshare', '--map-root-user', '--net'];
  async function expectOffline(): Promise<void> {
    const probe = await new Promise<string>((resolve) =>
      execFile(OFFLINE[0]!, [...OFFLINE.slice(1), 'true'], (error, _out, stderr) =>
        resolve(error ? stderr.trim() || error.message : ''),
      ),
    );
    if (probe)
      throw new Error(
        `these tests make a host unreachable in a network namespace of their own (util-linux unshare with user and network namespaces), which this machine refuses: ${probe}`,
      );
  }

  it('an unreachable host: the network error, at once', async () => {
    await expectOffline();
    // 192.0.2.1 is a documentation address (TEST-NET-1); inside the namespace no route leads anywhere.
    await expectStopped(
      'https://192.0.2.1/api/v1',
      /^gitea-mock verify: cannot reach https:\/\/192\.0\.2\.1\/api\/v1: (ENETUNREACH \(the network is unreachable\)|EHOSTUNREACH \(the host is unreachable\))$/,
      [],
      OFFLINE,
    );
  });

  it('a host name that cannot be looked up: the resolver error', async () => {
    await expectOffline();
    await expectStopped(
      'https://gitea.invalid/api/v1',
      /^gitea-mock verify: cannot reach https:\/\/gitea\.invalid\/api\/v1: (EAI_AGAIN \(the host name could not be looked up\)|ENOTFOUND \(no such host\))$/,
      [],
      OFFLINE,
    );
  });

  it('a port fetch refuses to use (the one of the issue, 9): says so', async () => {
    await expectStopped(
      'http://127.0.0.1:9/api/v1',
      /^gitea-mock verify: cannot reach http:\/\/127\.0\.0\.1:9\/api\/v1: fetch refuses port 9, which the Fetch standard blocks: use another port$/,
    );
  });
});
