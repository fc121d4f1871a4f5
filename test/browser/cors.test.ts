// The mock's CORS in real headless Chromium. A page on one 127.0.0.1 port calls the mock on
// another through the built client with a header of its own (`X-Request-Id`, as an app or a
// tracing SDK adds one): the browser asks first with a preflight, and the mock must allow that
// header, with credentials, for the page to get the answer. A page that asks for more headers than
// the mock's bound allows fails as browsers fail it (`TypeError: Failed to fetch`), which shows the
// first page's success is the mock's answer, not a browser that checks nothing.
import type { Page } from '../dist-tools/playwright.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundleBuiltClient } from './support/bundle.js';
import { launchChromium, type SuiteBrowser } from './support/chromium.js';
import { serveFiles, type StaticServer } from './support/static-server.js';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cors</title>
<script type="module">
import * as lib from '/gitea-contract.js';
window.lib = lib;
</script>
</head><body></body></html>`;

let site: StaticServer;
let browser: SuiteBrowser;
let page: Page;
/** The headers of each request the page made to the mock, as the page sent them (preflights are the browser's own and not listed). */
const sent: Record<string, string>[] = [];

beforeAll(async () => {
  site = await serveFiles({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/gitea-contract.js': { type: 'text/javascript; charset=utf-8', body: await bundleBuiltClient() },
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ serviceWorkers: 'block' })).newPage();
  const mock = new URL(inject('mockBaseUrl')).origin;
  page.on('request', (request) => void (request.url().startsWith(mock) && sent.push(request.headers())));
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => 'lib' in window);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** adminGetAllOrgs (`GET /admin/orgs`) from the page through the built client, with `headers` added to each call. */
function listOrganizations(
  baseUrl: string,
  headers: Record<string, string>,
): Promise<{ status?: number; total?: string | null; names?: (string | undefined)[]; failure?: string }> {
  return page.evaluate(
    async ({ baseUrl, headers }) => {
      const { createGiteaClient } = (window as unknown as { lib: typeof import('../../src/index.js') }).lib;
      const client = createGiteaClient({ baseUrl, auth: { token: 'tok-cors-browser' }, headers });
      try {
        const { data, response } = await client.GET('/admin/orgs', { params: { query: { limit: 2 } } });
        return {
          status: response.status,
          total: response.headers.get('x-total-count'),
          names: (data ?? []).map((org) => org.username),
        };
      } catch (error) {
        return { failure: String(error) };
      }
    },
    { baseUrl, headers },
  );
}

describe('in Chromium, a page of another origin calls the mock with headers of its own', () => {
  it('X-Request-Id: the preflight allows it, the request carries it, and the page reads the answer and its paging headers', async () => {
    sent.length = 0;
    const outcome = await listOrganizations(inject('mockBaseUrl'), { 'X-Request-Id': 'req-cors-42' });
    expect(outcome).toEqual({ status: 200, total: '5', names: ['acme', 'bluebird'] });
    expect(sent.map((headers) => headers['x-request-id'])).toEqual(['req-cors-42']);
  });

  it("a tracing SDK's traceparent and a few more at once", async () => {
    const outcome = await listOrganizations(inject('mockBaseUrl'), {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
      'X-Client-Version': '3.4.1',
    });
    expect(outcome.status).toBe(200);
  });

  it("more header names than the mock's bound of 2048 characters: the preflight allows Gitea's alone, and the browser refuses the call", async () => {
    const many = Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [`X-Trace-Header-${String(i).padStart(2, '0')}-Padding-Padding`, 'v']),
    );
    const outcome = await listOrganizations(inject('mockBaseUrl'), many);
    expect(outcome.failure).toMatch(/TypeError: Failed to fetch/);
  });
});
