// The built client in real headless Chromium: a page on one local origin calls the mock on
// another, so every call is cross-origin and the mock's CORS answers (preflights included) decide
// what the page may send and read.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '../../scripts/mock/server.js';
import { loadDocument, resolvePointer, type Json } from '../support/document.js';
import { bundleBuiltClient } from './support/bundle.js';
import { isLocal, launchChromium } from './support/chromium.js';
import { serveFiles, type StaticServer } from './support/static-server.js';

/** What the page's module puts on `window`: the package's API (typed from its source). */
type GiteaContract = typeof import('../../src/index.js');

const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));
const example = (name: string): Json | undefined => (resolvePointer(doc, `#/components/examples/${name}`) as { value?: Json } | undefined)?.value;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gitea-contract in a browser</title>
<script type="module">import * as giteaContract from '/gitea-contract.js'; window.giteaContract = giteaContract;</script>
</head><body></body></html>`;

let mock: MockServer;
let site: StaticServer;
let browser: Browser;
let page: Page;
const mockLog: string[] = [];
const requests: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  mock = await startMockServer({ port: 0, onRequest: (line) => mockLog.push(line) });
  site = await serveFiles({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/gitea-contract.js': { type: 'text/javascript; charset=utf-8', body: await bundleBuiltClient() },
  });
  browser = await launchChromium();
  // No request routing here: with any route set, Playwright answers CORS preflights itself and
  // the mock's own answers would never be tested. Every request is recorded instead, and names
  // other than 127.0.0.1 do not resolve in this browser.
  const context = await browser.newContext({ serviceWorkers: 'block' });
  context.on('request', (request) => requests.push(request.url()));
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => 'giteaContract' in window);
}, 60_000);

afterEach(() => {
  // Every call of every test stayed on 127.0.0.1, and the page raised no error.
  expect(requests.filter((url) => !isLocal(url))).toEqual([]);
  expect(pageErrors).toEqual([]);
});

/** Token credentials make each call preflighted; the mock itself must have answered the preflight. */
function expectPreflight(path: string): void {
  expect(mockLog.filter((line) => line.startsWith(`OPTIONS /api/v1${path} 204 `))).not.toEqual([]);
}

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await mock?.close();
});

describe('the built client in Chromium, against the mock on another origin', () => {
  it('serves the page and the mock from two origins', () => {
    expect(new URL(site.origin).hostname).toBe('127.0.0.1');
    expect(site.origin).not.toBe(mock.origin);
    expect(requests).toContain(`${site.origin}/gitea-contract.js`);
  });

  it('lists every organization across pages, and reads Link and X-Total-Count of a page', async () => {
    const result = await page.evaluate(async (baseUrl) => {
      const { collectAll, createGiteaClient } = (window as unknown as { giteaContract: GiteaContract }).giteaContract;
      const client = createGiteaClient({ baseUrl, auth: { token: 'x' } });
      const all = await collectAll(client, '/admin/orgs', { params: { query: { limit: 2 } } });
      const first = await client.GET('/admin/orgs', { params: { query: { limit: 2 } } });
      return {
        all: all.map((org) => org.name),
        first: first.data?.map((org) => org.name),
        link: first.response.headers.get('Link'),
        total: first.response.headers.get('X-Total-Count'),
      };
    }, mock.baseUrl);
    const names = (example('OrganizationList') as { name: string }[]).map((org) => org.name);
    expect(names).toHaveLength(5);
    expect(result.all).toEqual(names);
    expect(result.first).toEqual(names.slice(0, 2));
    expect(result.total).toBe('5');
    expect(result.link).toBe(`<${mock.baseUrl}/admin/orgs?limit=2&page=2>; rel="next",<${mock.baseUrl}/admin/orgs?limit=2&page=3>; rel="last"`);
    expectPreflight('/admin/orgs');
    expect(requests.filter((url) => url.startsWith(`${mock.baseUrl}/admin/orgs?`)).length).toBeGreaterThanOrEqual(4);
  });

  it('edits an organization label', async () => {
    const label = await page.evaluate(async (baseUrl) => {
      const { createGiteaClient, unwrap } = (window as unknown as { giteaContract: GiteaContract }).giteaContract;
      const client = createGiteaClient({ baseUrl, auth: { token: 'x' } });
      return unwrap(
        client.PATCH('/orgs/{org}/labels/{id}', {
          params: { path: { org: 'acme', id: 5001 } },
          body: { color: '#D93F0B', description: 'Needs attention before the next launch.', exclusive: true, is_archived: false },
        }),
      );
    }, mock.baseUrl);
    expect(label).toEqual(example('LabelEdited'));
    expectPreflight('/orgs/acme/labels/5001');
  });

  it('uploads a release attachment from a Blob', async () => {
    const attachment = await page.evaluate(async (baseUrl) => {
      const { createGiteaClient, uploadReleaseAttachment } = (window as unknown as { giteaContract: GiteaContract }).giteaContract;
      const client = createGiteaClient({ baseUrl, auth: { token: 'x' } });
      const file = new Blob([new Uint8Array([0x1f, 0x8b, 0x08, 0x00])], { type: 'application/gzip' });
      return uploadReleaseAttachment(client, { owner: 'acme', repo: 'rocket', id: 14001, file, name: 'rocket-1.2.0-linux-amd64.tar.gz' });
    }, mock.baseUrl);
    expect(attachment).toEqual(example('AttachmentUploaded'));
    expectPreflight('/repos/acme/rocket/releases/14001/assets');
  });

  it('renders markdown to an HTML string', async () => {
    const html = await page.evaluate(async (baseUrl) => {
      const { createGiteaClient, renderMarkdown } = (window as unknown as { giteaContract: GiteaContract }).giteaContract;
      const client = createGiteaClient({ baseUrl, auth: { token: 'x' } });
      return renderMarkdown(client, { Text: 'Fixed in #42, thanks **bob**!', Mode: 'comment', Context: '/acme/rocket' });
    }, mock.baseUrl);
    expect(html).toBe(example('MarkdownRendered'));
    expectPreflight('/markdown');
  });

  it('reads an error answer across origins as an ApiError', async () => {
    const error = await page.evaluate(async (baseUrl) => {
      const { ApiError, createGiteaClient, unwrap } = (window as unknown as { giteaContract: GiteaContract }).giteaContract;
      const client = createGiteaClient({ baseUrl, auth: { token: 'x' } });
      try {
        await unwrap(client.GET('/repos/{owner}/{repo}/keys/{id}', { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } }, headers: { Prefer: 'code=404' } }));
        return 'no error';
      } catch (caught) {
        return caught instanceof ApiError ? { status: caught.status, operationId: caught.operationId, hasBody: caught.body !== undefined } : String(caught);
      }
    }, mock.baseUrl);
    expect(error).toEqual({ status: 404, operationId: 'repoGetKey', hasBody: true });
    expectPreflight('/repos/acme/rocket/keys/11001');
  });
});
