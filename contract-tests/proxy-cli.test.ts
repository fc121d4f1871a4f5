// `gitea-mock proxy` as users run it (the built bin): a 50 MB download streams through with the
// proxy's memory bounded, violations are printed even with --quiet, the report is written on
// exit, --fail-on-violation sets the exit code, and an upstream that would see credentials in
// clear text is refused at start.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, get, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { outputFileProblem } from '../test/support/mock-internals.js';
import { launch } from './support/launch.js';
import { rawUpstream } from './support/upstream.js';

const CLI = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const SIZE = 50 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/** Peak and current resident memory of a process, in MiB (Linux). */
async function memory(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024;
  return { peak: kib('VmHWM'), now: kib('VmRSS') };
}

let upstream: Server;
let origin: string;
let folder: string;
/** Bytes of the download the upstream has handed to its socket so far. */
let sent = 0;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'gitea-contract-proxy-cli-'));
  // Streams 50 MB without holding them; answers the orgs list without X-Total-Count (a violation).
  upstream = createServer((req, res) => {
    if (req.url === '/attachments/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) });
      sent = 0;
      const pump = (): void => {
        while (sent < SIZE) {
          sent += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' }).end('[]');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await rm(folder, { recursive: true, force: true });
});

describe('gitea-mock proxy', () => {
  it('streams a 50 MB download without holding it, prints violations under --quiet, and writes the report on exit', async () => {
    const report = join(folder, 'report.json');
    const proxy = await launch(process.execPath, [CLI, 'proxy', origin, '--port', '0', '--quiet', '--report', report]);
    // This upstream answers no version: the proxy says so, and checks against the base.
    expect(proxy.output()).toContain(`(proxy to ${origin}, checked as gitea-1.27)`);
    const before = await memory(proxy.child.pid!);
    const hash = createHash('sha256');
    let received = 0;
    let aheadWhilePaused = Infinity;
    await new Promise<void>((resolve, reject) => {
      get(`${new URL(proxy.baseUrl).origin}/attachments/big`, (res) => {
        let paused = false;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          hash.update(chunk);
          if (!paused && received >= 4 * 1024 * 1024) {
            // A slow reader: the proxy must stop reading from the upstream, not keep the rest.
            paused = true;
            res.pause();
            setTimeout(() => {
              aheadWhilePaused = sent - received;
              res.resume();
            }, 500);
          }
        });
        res.on('end', resolve);
        res.on('error', reject);
      }).on('error', reject);
    });
    const after = await memory(proxy.child.pid!);
    expect(received).toBe(SIZE);
    const expected = createHash('sha256');
    for (let sent = 0; sent < SIZE; sent += CHUNK.length) expected.update(CHUNK);
    expect(hash.digest('hex')).toBe(expected.digest('hex'));
    // Streamed with back-pressure: while the reader paused, the upstream was held to what the
    // sockets' buffers take, far from the 46 MB left; and the proxy's peak memory grew by less
    // than the download (what it does grow by is garbage not yet collected).
    expect(aheadWhilePaused).toBeLessThan(16 * 1024 * 1024);
    expect(after.peak - before.peak).toBeLessThan(50);

    const orgs = await fetch(`${proxy.baseUrl}/admin/orgs`, { headers: { authorization: 'token tok_cli_SECRET' } });
    expect(orgs.headers.get('x-contract-violations')).toBe('1');
    await expect
      .poll(() => proxy.output())
      .toContain(
        'gitea-mock: contract: adminGetAllOrgs GET /api/v1/admin/orgs: 1 violation: response header X-Total-Count is required but missing\n',
      );
    expect(await proxy.stop('SIGTERM')).toBe(0);
    expect(proxy.output()).not.toContain('tok_cli_SECRET');
    expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
      upstream: origin,
      operations: { adminGetAllOrgs: { exchanges: 1, withViolations: 1, violations: { 'response.headers': 1 } } },
      notInContract: { exchanges: 1 },
    });
  }, 60_000);

  it('--junit alone writes the exchanges as JUnit XML on exit: a test case per operation, a failure per distinct violation', async () => {
    const junit = join(folder, 'proxy.xml');
    const proxy = await launch(process.execPath, [CLI, 'proxy', origin, '--port', '0', '--quiet', '--junit', junit]);
    const headers = { authorization: 'token tok_junit_SECRET' };
    for (let round = 0; round < 2; round++) await (await fetch(`${proxy.baseUrl}/admin/orgs`, { headers })).text();
    await expect.poll(() => proxy.output()).toContain('gitea-mock: contract: adminGetAllOrgs');
    expect(await proxy.stop('SIGTERM')).toBe(0);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="gitea-mock proxy" tests="2" failures="1" errors="0"/);
    expect(xml).toContain('<testcase classname="gitea-mock proxy" name="adminGetAllOrgs"');
    expect(xml.match(/<failure /g)).toHaveLength(1);
    expect(xml).toContain('type="response.headers"');
    expect(xml).not.toContain('tok_junit_SECRET');
  });

  it('--fail-on-violation: exits 1 when stopped after an exchange broke the contract, saying so, and 0 when every exchange conformed', async () => {
    const headers = { authorization: 'token tok_fail_SECRET' };
    // The same request through a proxy to this file's upstream (no X-Total-Count) and to the contract's own mock.
    const [failing, passing] = await Promise.all([
      launch(process.execPath, [CLI, 'proxy', origin, '--port', '0', '--quiet', '--fail-on-violation']),
      launch(process.execPath, [
        CLI,
        'proxy',
        new URL(inject('mockBaseUrl')).origin,
        '--port',
        '0',
        '--quiet',
        '--fail-on-violation',
      ]),
    ]);
    try {
      const [broken, conforming] = await Promise.all(
        [failing, passing].map((proxy) => fetch(`${proxy.baseUrl}/admin/orgs?limit=2`, { headers })),
      );
      expect([broken!.headers.get('x-contract-violations'), conforming!.headers.get('x-contract-violations')]).toEqual([
        '1',
        '0',
      ]);
      await Promise.all([broken!.arrayBuffer(), conforming!.arrayBuffer()]);
      // Outside the contract: passed through, and no reason to fail.
      expect((await fetch(`${new URL(passing.baseUrl).origin}/api/v1/version`)).status).toBe(200);
      // SIGTERM as CI stops a background job, SIGINT as Ctrl-C does.
      expect(await failing.stop('SIGTERM')).toBe(1);
      expect(failing.output()).toContain(
        'gitea-mock: 1 exchange broke the contract: exit code 1 (--fail-on-violation)\n',
      );
      expect(await passing.stop('SIGINT')).toBe(0);
      expect(passing.output()).not.toContain('broke the contract');
      expect(failing.output() + passing.output()).not.toContain('tok_fail_SECRET');
    } finally {
      await Promise.all([failing.stop('SIGKILL'), passing.stop('SIGKILL')]);
    }
  });

  it("--fail-on-violation: exits 2 when no exchange of the contract was checked: every one got the proxy's own 502 (the upstream down), or none came", async () => {
    // A port that was free a moment ago: the upstream refuses every connection.
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const downOrigin = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
    await new Promise((resolve) => down.close(resolve));
    const report = join(folder, 'down.json');
    const [unanswered, idle] = await Promise.all([
      launch(process.execPath, [
        CLI,
        'proxy',
        downOrigin,
        '--port',
        '0',
        '--quiet',
        '--fail-on-violation',
        '--report',
        report,
      ]),
      launch(process.execPath, [CLI, 'proxy', origin, '--port', '0', '--quiet', '--fail-on-violation']),
    ]);
    try {
      for (const path of ['/admin/orgs', '/repos/acme/rocket/keys/11001']) {
        const answer = await fetch(`${unanswered.baseUrl}${path}`, { headers: { authorization: 'token tok_down' } });
        expect([answer.status, ((await answer.json()) as { message: string }).message]).toEqual([
          502,
          `the upstream ${downOrigin.slice(7)} failed: ECONNREFUSED`,
        ]);
      }
      // Outside the contract: neither checked nor counted as unanswered.
      expect((await fetch(`${new URL(unanswered.baseUrl).origin}/api/v1/version`)).status).toBe(502);
      expect(await unanswered.stop('SIGTERM')).toBe(2);
      expect(unanswered.output()).toContain(
        'gitea-mock: no exchange of the contract was checked: 2 exchanges of the contract got no answer from the upstream (the proxy answered them itself): exit code 2 (--fail-on-violation)\n',
      );
      expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
        operations: {},
        notAnswered: { exchanges: 2 },
        notInContract: { exchanges: 1 },
      });
      expect(await idle.stop('SIGTERM')).toBe(2);
      expect(idle.output()).toContain(
        'gitea-mock: no exchange of the contract was checked: none went through the proxy: exit code 2 (--fail-on-violation)\n',
      );
    } finally {
      await Promise.all([unanswered.stop('SIGKILL'), idle.stop('SIGKILL')]);
    }
  });

  it('a report that cannot be written when it stops (its folder removed meanwhile): one line saying so, exit code 1, no stack trace', async () => {
    const gone = await mkdtemp(join(folder, 'gone-'));
    // A report path that is a folder is refused at start too.
    expect(outputFileProblem(gone)).toBe(`${gone} is a folder`);
    const proxy = await launch(process.execPath, [
      CLI,
      'proxy',
      origin,
      '--server',
      'gitea-1.27',
      '--port',
      '0',
      '--quiet',
      '--report',
      join(gone, 'report.json'),
    ]);
    try {
      await (
        await fetch(`${proxy.baseUrl}/repos/acme/rocket/keys/11001`, { headers: { authorization: 'token tok_gone' } })
      ).arrayBuffer();
      await rm(gone, { recursive: true });
      expect(await proxy.stop('SIGTERM')).toBe(1);
      const lines = proxy.output().trimEnd().split('\n');
      expect(lines.at(-1)).toBe(
        `gitea-mock: the report was not written: ENOENT: no such file or directory, open '${join(gone, 'report.json')}'`,
      );
      expect(proxy.output()).not.toMatch(/\n\s+at /);
    } finally {
      await proxy.stop('SIGKILL');
    }
  });

  it.each([
    [
      'a reason phrase Node refuses to write',
      [],
      'HTTP/1.1 200 O\x7fK',
      'the reason phrase holds a character HTTP does not allow',
    ],
    // With Node's lenient parser (NODE_OPTIONS=--insecure-http-parser), a header value too.
    [
      'a header value Node refuses to write',
      ['--insecure-http-parser'],
      'HTTP/1.1 200 OK\r\nX-Bad: a\x7fb',
      'the header "X-Bad" holds a character HTTP does not allow',
    ],
  ])(
    'an upstream sending %s: the process answers 502 naming it, keeps serving, and writes its report on exit',
    async (_what, nodeOptions, statusLine, problem) => {
      let answers = 0;
      const broken = await rawUpstream((socket) =>
        socket.end(
          `${answers++ === 0 ? statusLine : 'HTTP/1.1 200 OK'}\r\nContent-Type: application/json\r\nX-Total-Count: 0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]`,
          'latin1',
        ),
      );
      const report = join(folder, `report-${nodeOptions.length}.json`);
      const proxy = await launch(process.execPath, [
        ...nodeOptions,
        CLI,
        'proxy',
        broken.origin,
        '--server',
        'gitea-1.27',
        '--port',
        '0',
        '--quiet',
        '--report',
        report,
      ]);
      try {
        const first = await fetch(`${proxy.baseUrl}/admin/orgs`, { headers: { authorization: 'token tok_broken' } });
        expect([first.status, ((await first.json()) as { message: string }).message]).toEqual([
          502,
          `the upstream ${broken.origin.slice(7)} sent an answer that cannot be passed on: ${problem}`,
        ]);
        const second = await fetch(`${proxy.baseUrl}/admin/orgs`, { headers: { authorization: 'token tok_broken' } });
        expect([second.status, await second.text()]).toEqual([200, '[]']);
        expect(proxy.child.exitCode).toBeNull();
        expect(await proxy.stop('SIGTERM')).toBe(0);
        expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
          operations: { adminGetAllOrgs: { exchanges: 2 } },
        });
      } finally {
        await proxy.stop('SIGKILL');
        await broken.close();
      }
    },
  );

  it.each([
    [
      ['proxy', 'http://gitea.example.org'],
      1,
      "gitea-mock: cannot start: the upstream http://gitea.example.org is plain http: clients' credentials would cross the network in clear; use https, or --allow-insecure-http\n",
    ],
    [['--strict'], 2, 'gitea-mock: --strict is an option of gitea-mock proxy, not of gitea-mock'],
    [['--fail-on-violation'], 2, 'gitea-mock: --fail-on-violation is an option of gitea-mock proxy, not of'],
    [['--cors-origin', 'https://app.example.org'], 2, 'gitea-mock: --cors-origin is an option of gitea-mock proxy'],
    [
      ['proxy', 'https://gitea.example.org', '--cors-origin', 'https://app.example.org/'],
      2,
      'gitea-mock: --cors-origin: "https://app.example.org/" is not an origin: give the scheme, host and port only, such as https://app.example.org',
    ],
    [
      ['proxy', 'https://gitea.example.org', '--upstream-connections', '0'],
      2,
      'gitea-mock: invalid --upstream-connections "0": give a whole number from 1',
    ],
    [
      ['proxy', 'https://gitea.example.org', '--exchange-timeout', '0'],
      2,
      'gitea-mock: --exchange-timeout takes a number of seconds above 0 (at most 86400), not "0"',
    ],
    [
      ['proxy', 'https://gitea.example.org', '--dynamic'],
      2,
      'gitea-mock: --dynamic is an option of gitea-mock, not of gitea-mock proxy',
    ],
    // Written when it stops: a folder that is not there is refused now, not found missing then.
    [
      ['proxy', 'https://gitea.example.org', '--report', '/nonexistent-gitea-contract/report.json'],
      2,
      'gitea-mock: --report /nonexistent-gitea-contract/report.json: cannot write in /nonexistent-gitea-contract (ENOENT)\n',
    ],
  ])('refuses %j', async (args, code, message) => {
    const failure = await promisify(execFile)(process.execPath, [CLI, ...args, '--port', '0']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(code);
    expect(failure?.stderr.startsWith(message)).toBe(true);
  });
});
