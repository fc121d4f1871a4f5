// `gitea-mock/msw` in a browser, as a frontend app uses it: a page bundled with esbuild for the
// browser (the built client, msw's setupWorker and the package's `browser` build), served from
// 127.0.0.1 with msw's mockServiceWorker.js, opened in headless Chromium. The service worker
// answers every API call; the handlers behind it are the server's front, over the examples (on a
// host that does not exist) and the sandbox (on the page's own origin, a relative base URL). The
// page shows what it got and a verdict; the test checks the results, that every API answer came
// from the service worker, and a screenshot of the verdict.
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Page } from '../dist-tools/playwright.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_VERSION, NO_GENERATOR, operationTableOf } from '../support/mock-internals.js';
import { isLocal, launchChromium, type SuiteBrowser } from './support/chromium.js';
import { serveFiles, type StaticServer } from './support/static-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER_SCRIPT = fileURLToPath(new URL('../../node_modules/msw/lib/mockServiceWorker.js', import.meta.url));
const EXAMPLES_BASE = 'https://gitea.example.org/api/v1';

/** The page's code: each step's outcome as one short line, then a verdict box the screenshot shows. */
const APP = `
import { setupWorker } from 'msw/browser';
import { createGiteaHandlers } from 'gitea-mock/msw';
import { ApiError, createGiteaClient, renderMarkdown } from 'gitea-contract';

const examples = createGiteaHandlers({ baseUrl: ${JSON.stringify(EXAMPLES_BASE)}, onWarning: (line) => warnings.push(line) });
const sandbox = createGiteaHandlers({ baseUrl: '/api/v1', sandbox: true, onWarning: (line) => warnings.push(line) });
const warnings = [];
const worker = setupWorker(...examples.handlers, ...sandbox.handlers);

async function run() {
  await worker.start({ serviceWorker: { url: '/mockServiceWorker.js' }, onUnhandledRequest: 'error', quiet: true });
  const results = {};
  const remote = createGiteaClient({ baseUrl: ${JSON.stringify(EXAMPLES_BASE)}, auth: { token: 'page' } });
  const own = (token) => createGiteaClient({ baseUrl: location.origin + '/api/v1', auth: { token } });

  const page = await remote.GET('/admin/orgs', { params: { query: { limit: 2 } } });
  results.paging = [page.response.status, page.response.headers.get('x-total-count'), page.data.map((org) => org.username).join(' '), page.response.headers.get('link')];
  const anonymous = await fetch(${JSON.stringify(EXAMPLES_BASE)} + '/repos/acme/rocket/keys/11001');
  results.credentials = [anonymous.status, await anonymous.json()];
  const invalid = await remote.PUT('/repos/{owner}/{repo}/collaborators/{collaborator}', { params: { path: { owner: 'acme', repo: 'rocket', collaborator: 'bob' } }, body: { permission: 'owner' } });
  results.validation = [invalid.response.status, invalid.error];
  const strict = createGiteaClient({ baseUrl: ${JSON.stringify(EXAMPLES_BASE)}, auth: { token: 'page' }, throwOnError: true, headers: { Prefer: 'code=404' } });
  const failure = await strict.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } }).catch((error) => error);
  results.preferCode = [failure instanceof ApiError, failure.status, failure.operationId, failure.body];
  const named = await remote.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } }, headers: { Prefer: 'example=invalidCredentials' } });
  results.preferExample = [named.response.status, named.error];
  const version = await fetch(${JSON.stringify(EXAMPLES_BASE)} + '/version');
  results.version = [version.status, await version.json()];
  const generated = await remote.GET('/admin/orgs', { headers: { Prefer: 'dynamic=true' } });
  results.dynamic = [generated.response.status, generated.error?.message];

  const renamed = await own('page-a').POST('/admin/users/{username}/rename', { params: { path: { username: 'bob' } }, body: { new_username: 'robert' } });
  const members = async (token) => (await own(token).GET('/teams/{id}/members', { params: { path: { id: 12001 } } })).data.map((user) => user.login).join(' ');
  results.sandbox = [renamed.response.status, await members('page-a'), await members('page-b')];
  results.world = (await sandbox.world({ token: 'page-a' })).users.map((user) => user.login).join(' ');
  results.markdown = await renderMarkdown(own('page-a'), { Text: 'Fixes **#42** for @alice', Mode: 'comment', Context: '/acme/rocket' });
  results.warnings = warnings;
  return results;
}

const show = (results, verdict) => {
  document.querySelector('#results').textContent = JSON.stringify(results, null, 1);
  const box = document.querySelector('#verdict');
  box.textContent = verdict;
  box.style.background = verdict.startsWith('answered') ? '#1b7f3b' : '#b3261e';
};
window.outcome = run().then(
  (results) => (show(results, 'answered by the service worker'), results),
  (error) => (show({}, 'failed: ' + error), { failure: String(error && error.stack || error) }),
);
`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gitea-mock/msw in a browser</title>
<style>body { font: 14px sans-serif; margin: 16px } #verdict { width: 320px; height: 48px; color: white; font-weight: bold; padding: 8px } pre { font-size: 11px }</style>
<script type="module" src="/app.js"></script>
</head><body><div id="verdict">running</div><pre id="results"></pre></body></html>`;

let site: StaticServer;
let browser: SuiteBrowser;
let page: Page;
let bundle: { code: string; inputs: string[]; builtins: string[] };
/** Each API call the page made: its URL and whether the service worker answered it. */
const apiCalls: { url: string; fromServiceWorker: boolean }[] = [];
/** Every URL the browser loaded, to show none left this machine. */
const loaded: string[] = [];

beforeAll(async () => {
  const result = await build({
    stdin: { contents: APP, resolveDir: ROOT, sourcefile: 'app.js', loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // As an app's build resolves `gitea-contract`: the package (dist/), not this repository's path alias to src/.
    tsconfigRaw: {},
  });
  const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
  const imports = Object.values(result.metafile.inputs).flatMap((input) =>
    input.imports.map((imported) => imported.path),
  );
  bundle = {
    code: result.outputFiles[0]!.text,
    inputs: Object.keys(result.metafile.inputs),
    builtins: imports.filter((path) => path.startsWith('node:') || builtins.has(path)),
  };

  site = await serveFiles({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: bundle.code },
    '/mockServiceWorker.js': { type: 'text/javascript; charset=utf-8', body: await readFile(WORKER_SCRIPT) },
  });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  context.on('request', (request) => void loaded.push(request.url()));
  page = await context.newPage();
  // A failure of the page's script shows in the test's output (the page shows its verdict too).
  page.on('pageerror', (error) => void console.log('page error:', error));
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.startsWith('/api/v1'))
      apiCalls.push({ url: response.url(), fromServiceWorker: response.fromServiceWorker() });
  });
  await page.goto(`${site.origin}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

describe('gitea-mock/msw for the browser', () => {
  it('bundles with esbuild for the browser from its `browser` build, with no Node built-in', () => {
    expect(bundle.builtins).toEqual([]);
    expect(bundle.inputs).toContain('mock/dist/msw.browser.mjs');
    expect(bundle.inputs).toContain('dist/index.js');
    expect(
      bundle.inputs.filter((input) => input.startsWith('mock/dist/') && input !== 'mock/dist/msw.browser.mjs'),
    ).toEqual([]);
  });

  it('answers the built client in Chromium through setupWorker, as the server does', async () => {
    await page.waitForFunction(() => 'outcome' in window);
    const results = (await page.evaluate(() => (window as unknown as { outcome: Promise<unknown> }).outcome)) as Record<
      string,
      unknown
    >;
    const table = await operationTableOf(fileURLToPath(new URL('../../openapi.yaml', import.meta.url)));
    const keyOp = table.operations.find((op) => op.operationId === 'repoGetKey')!;
    const exampleOf = (status: string, key?: string): unknown => {
      const examples = keyOp.operation.responses
        .find((response) => response.code === status)!
        .contents!.find((content) => content.mediaType === 'application/json')!.examples!;
      return (examples.find((example) => key === undefined || example.key === key) as { value: unknown }).value;
    };
    const docs = 'https://gitea.example.org/api/swagger';
    expect(results).toEqual({
      paging: [
        200,
        '5',
        'acme bluebird',
        '<https://gitea.example.org/api/v1/admin/orgs?limit=2&page=2>; rel="next",<https://gitea.example.org/api/v1/admin/orgs?limit=2&page=3>; rel="last"',
      ],
      credentials: [401, { message: 'token is required', url: docs }],
      validation: [422, { message: expect.stringContaining('permission'), url: docs }],
      preferCode: [true, 404, 'repoGetKey', exampleOf('404')],
      preferExample: [401, exampleOf('401', 'invalidCredentials')],
      version: [200, { version: MOCK_VERSION }],
      dynamic: [400, NO_GENERATOR],
      sandbox: [204, 'alice robert carol', 'alice bob carol'],
      world: 'alice robert carol',
      markdown: `<p>Fixes <strong><a href="${new URL(page.url()).origin}/acme/rocket/issues/42" class="ref-issue">#42</a></strong> for <a href="${new URL(page.url()).origin}/alice" class="mention">@alice</a></p>\n`,
      warnings: [],
    });
  }, 30_000);

  it('every API call was answered by the service worker, and nothing left this machine', () => {
    expect(apiCalls).toHaveLength(11);
    expect(apiCalls.filter((call) => !call.fromServiceWorker)).toEqual([]);
    expect(apiCalls.some((call) => call.url.startsWith(EXAMPLES_BASE))).toBe(true);
    // The examples' host does not exist: the browser never asked the network for it.
    expect(loaded.filter((url) => !isLocal(url) && !url.startsWith(EXAMPLES_BASE))).toEqual([]);
  });

  it('shows its verdict in a screenshot', async () => {
    const verdict = page.locator('#verdict');
    expect(await verdict.textContent()).toBe('answered by the service worker');
    const png = await verdict.screenshot();
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // The verdict's colour, read back from the screenshot by the page's own image decoder.
    const pixel = await page.evaluate(async (base64) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = Object.assign(document.createElement('canvas'), { width: image.width, height: image.height });
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      return [...context.getImageData(2, 2, 1, 1).data];
    }, png.toString('base64'));
    expect(pixel).toEqual([0x1b, 0x7f, 0x3b, 255]);
  });
});
