// The README's promise that the client runs unchanged in Node (20, 22 and 24), Deno, Bun and
// browsers, held: one scenario (scenario.mjs) runs against the mock with the built client in each
// of them at once, real runtimes over real loopback HTTP, and the suite prints one table of
// runtime × step. The mock itself starts and answers under Node 22 and 24 too. In
// Chromium the page comes from one local origin and the mock answers on another, so the mock's
// own CORS answers, preflights included, decide what the page may send and read.
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Page } from '../dist-tools/playwright.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../mock/src/server.js';
import { bundleBuiltClient } from '../browser/support/bundle.js';
import { isLocal, launchChromium, type SuiteBrowser } from '../browser/support/chromium.js';
import { serveFiles, type StaticServer } from '../browser/support/static-server.js';
import { type Json, loadDocument, resolvePointer } from '../support/mock-internals.js';
import type { LoopbackServer } from '../support/loopback.js';
import { launch } from '../../contract-tests/support/launch.js';
import { startStallServer } from '../support/stall-server.js';
import { STEP_NAMES, type ScenarioConfig, type ScenarioResult } from './scenario.mjs';
import { startCredentialEcho } from './support/credential-echo.js';
import { nodeExecutable, pinnedNode, type NodeMajor } from './support/node-versions.js';
import { killRunning, runInProcess, type ProcessRuntime } from './support/run-runtime.js';
import { failures, resultTable, type Outcome } from './support/table.js';

const RUNTIMES = ['node', 'node22', 'node24', 'deno', 'bun', 'chromium'] as const;
/** A delivery's payload as the sandbox writes it, from the document's example, and its hook's secret (in UTF-8). */
const WEBHOOK_SECRET = 'runtime-hook-sécret';
const WEBHOOK_PAYLOAD = JSON.stringify(
  resolvePointer(
    loadDocument(new URL('../../openapi.yaml', import.meta.url)),
    '#/components/examples/WebhookPullRequestClosed/value',
  ),
  null,
  2,
);
type Runtime = (typeof RUNTIMES)[number];

const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));
const example = (name: string): Json | undefined =>
  (resolvePointer(doc, `#/components/examples/${name}`) as { value?: Json } | undefined)?.value;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gitea-contract in a browser</title>
<script type="module">
import * as giteaContract from '/gitea-contract.js';
import { runScenario } from '/scenario.mjs';
window.runScenario = (config) => runScenario(giteaContract, config);
</script>
</head><body></body></html>`;

let mock: MockServer;
let stall: LoopbackServer;
let echo: LoopbackServer;
let site: StaticServer | undefined;
let browser: SuiteBrowser | undefined;
let scratch: string;
const mockLog: string[] = [];
const pageRequests: string[] = [];
const pageErrors: string[] = [];
const outcomes = new Map<Runtime, Outcome>();

/** Headless Chromium on a page of its own origin that holds the bundled client and the scenario. */
async function openScenarioPage(): Promise<Page> {
  site = await serveFiles({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/gitea-contract.js': { type: 'text/javascript; charset=utf-8', body: await bundleBuiltClient() },
    '/scenario.mjs': {
      type: 'text/javascript; charset=utf-8',
      body: await readFile(new URL('./scenario.mjs', import.meta.url)),
    },
  });
  browser = await launchChromium();
  // No request routing here: with any route set, Playwright answers CORS preflights itself and
  // the mock's own answers would never be tested. Every request is recorded instead, and names
  // other than 127.0.0.1 do not resolve in this browser.
  const context = await browser.newContext({ serviceWorkers: 'block' });
  context.on('request', (request) => pageRequests.push(request.url()));
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => 'runScenario' in window);
  return page;
}

async function runInChromium(ready: Promise<Page>, config: ScenarioConfig): Promise<ScenarioResult> {
  const page = await ready;
  return page.evaluate(
    (c) => (window as unknown as { runScenario(c: ScenarioConfig): Promise<ScenarioResult> }).runScenario(c),
    config,
  );
}

beforeAll(async () => {
  // The browser starts while the servers do; a failure shows in Chromium's row of the table.
  const page = openScenarioPage();
  page.catch(() => {});
  [mock, stall, echo, scratch] = await Promise.all([
    startMockServer({ port: 0, onRequest: (line) => mockLog.push(line) }),
    startStallServer(),
    startCredentialEcho(),
    mkdtemp(join(tmpdir(), 'gitea-contract-runtimes-')),
  ]);
  const config: ScenarioConfig = {
    baseUrl: mock.baseUrl,
    stallUrl: stall.baseUrl,
    echoUrl: echo.baseUrl,
    webhook: {
      secret: WEBHOOK_SECRET,
      payload: WEBHOOK_PAYLOAD,
      signature: createHmac('sha256', WEBHOOK_SECRET).update(WEBHOOK_PAYLOAD).digest('hex'),
    },
    expected: {
      organizations: (example('OrganizationList') as { name: string }[]).map((org) => org.name),
      label: example('LabelEdited'),
      attachment: example('AttachmentUploaded'),
      markdown: example('MarkdownRendered') as string,
      notFoundMessage: (example('NotFound') as { message: string }).message,
    },
  };
  // All at once: each mostly waits on the others' answers and on its own start-up.
  await Promise.all(
    RUNTIMES.map(async (runtime) => {
      try {
        const result =
          runtime === 'chromium'
            ? await runInChromium(page, config)
            : await runInProcess(runtime as ProcessRuntime, config, scratch);
        outcomes.set(runtime, { runtime, result });
      } catch (error) {
        outcomes.set(runtime, { runtime, error: error instanceof Error ? error.message : String(error) });
      }
    }),
  );
  console.log(
    resultTable(
      RUNTIMES.map((runtime) => outcomes.get(runtime)!),
      STEP_NAMES,
    ),
  );
}, 90_000);

afterAll(async () => {
  killRunning();
  await browser?.close();
  await Promise.all([site?.close(), mock?.close(), stall?.close(), echo?.close()]);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the built client in Node 20, 22 and 24, Deno, Bun and Chromium, against the mock', () => {
  it.each(RUNTIMES)('%s runs every step of the scenario', (runtime) => {
    const outcome = outcomes.get(runtime)!;
    expect(failures(outcome, STEP_NAMES)).toEqual([]);
    // The result came from that runtime, not from another one standing in for it.
    const major = /^node(\d+)$/.exec(runtime)?.[1] as NodeMajor | undefined;
    expect(outcome.result?.runtime.name).toBe(major ? 'node' : runtime);
    if (major) expect(outcome.result?.runtime.version).toBe(pinnedNode(major));
    expect(outcome.result?.steps.map((step) => step.step)).toEqual(STEP_NAMES);
  });
});

describe('the built mock under Node 22 and 24', () => {
  it.each(['22', '24'] as const)('Node %s: gitea-mock starts and answers, in the sandbox too', async (major) => {
    const node = await nodeExecutable(major);
    const cli = fileURLToPath(new URL('../../mock/dist/cli.mjs', import.meta.url));
    for (const mode of [[], ['sandbox']]) {
      const mock = await launch(node, [cli, ...mode, '--port', '0', '--quiet']);
      try {
        const version = await fetch(`${mock.baseUrl}/version`);
        expect(await version.json()).toEqual({ version: expect.stringMatching(/^1\.27\.0\+gitea-contract-mock$/) });
        const orgs = await fetch(`${mock.baseUrl}/admin/orgs?limit=2`, {
          headers: { authorization: 'token node-versions' },
        });
        expect([orgs.status, orgs.headers.get('x-total-count'), ((await orgs.json()) as unknown[]).length]).toEqual([
          200,
          '5',
          2,
        ]);
      } finally {
        expect(await mock.stop()).toBe(0);
      }
    }
    // The process was that Node, not ours.
    expect((await promisify(execFile)(node, ['-p', 'process.versions.node'])).stdout.trim()).toBe(pinnedNode(major));
  });
});

describe('in Chromium, across origins', () => {
  it('serves the page and the mock from two loopback origins', () => {
    expect(new URL(site!.origin).hostname).toBe('127.0.0.1');
    expect(site!.origin).not.toBe(new URL(mock.baseUrl).origin);
    expect(pageRequests).toContain(`${site!.origin}/gitea-contract.js`);
  });

  it('had every preflight answered by the mock itself', () => {
    // Token credentials make each call preflighted.
    for (const path of [
      '/admin/orgs',
      '/orgs/acme/labels/5001',
      '/repos/acme/rocket/releases/14001/assets',
      '/markdown',
      '/repos/acme/rocket/keys/11001',
    ]) {
      expect(
        mockLog.filter((line) => line.startsWith(`OPTIONS /api/v1${path} 204 `)),
        path,
      ).not.toEqual([]);
    }
    // Three pages and the page whose headers were read.
    expect(pageRequests.filter((url) => url.startsWith(`${mock.baseUrl}/admin/orgs?`)).length).toBeGreaterThanOrEqual(
      4,
    );
  });

  it('sent no request beyond 127.0.0.1, and the page raised no error', () => {
    expect(pageRequests.length).toBeGreaterThan(0);
    expect(pageRequests.filter((url) => !isLocal(url))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
