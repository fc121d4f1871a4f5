// The built client in real headless Chromium, answered with a redirect. A browser's fetch with
// `redirect: 'manual'` gives an opaque redirect (status 0, no Location): the client cannot tell
// where it leads, so it follows none and the call ends with an ApiError saying so. Nothing
// reaches the other origin, even one that answers every CORS preflight with yes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Page } from '../dist-tools/playwright.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../support/loopback.js';
import { bundleBuiltClient } from './support/bundle.js';
import { launchChromium, type SuiteBrowser } from './support/chromium.js';
import { serveFiles, type StaticServer } from './support/static-server.js';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redirects</title>
<script type="module">
import * as lib from '/gitea-contract.js';
window.lib = lib;
</script>
</head><body></body></html>`;

/** A server that lets any page call it (CORS preflights answered yes) and records every request. */
interface CorsServer extends LoopbackServer {
  received: { method: string; url: string }[];
  /** The answer to each request that is not a preflight. */
  answer: (req: IncomingMessage, res: ServerResponse) => void;
}

async function corsServer(): Promise<CorsServer> {
  const received: CorsServer['received'] = [];
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, PUT, POST, PATCH, DELETE',
    'access-control-allow-headers': 'authorization, content-type, x-gitea-otp, sudo, x-api-key',
  };
  const state = {} as CorsServer;
  const server = createServer((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '' });
    req.resume();
    for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (req.method === 'OPTIONS') res.writeHead(204).end();
    else state.answer(req, res);
  });
  const loopback = await serveOnLoopback(server, () => server.closeAllConnections());
  return Object.assign(state, loopback, {
    received,
    answer: (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
  });
}

let site: StaticServer;
let gitea: CorsServer;
let elsewhere: CorsServer;
let browser: SuiteBrowser;
let page: Page;

beforeAll(async () => {
  [gitea, elsewhere] = await Promise.all([corsServer(), corsServer()]);
  site = await serveFiles({
    '/': { type: 'text/html; charset=utf-8', body: PAGE },
    '/gitea-contract.js': { type: 'text/javascript; charset=utf-8', body: await bundleBuiltClient() },
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ serviceWorkers: 'block' })).newPage();
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => 'lib' in window);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([site?.close(), gitea?.close(), elsewhere?.close()]);
});

/** updateUserSecret from the page, with a token, a credential header and a secret in the body; what came back. */
function putSecret(baseUrl: string): Promise<{
  name: string | undefined;
  status: number | undefined;
  message: string | undefined;
  responseType: string;
}> {
  return page.evaluate(async (baseUrl) => {
    const { createGiteaClient } = (window as unknown as { lib: typeof import('../../src/index.js') }).lib;
    const client = createGiteaClient({
      baseUrl,
      auth: { token: 'tok-browser-SECRET-2b7' },
      headers: { 'X-Api-Key': 'key-browser-SECRET-9c1' },
    });
    const { error, response } = await client.PUT('/user/actions/secrets/{secretname}', {
      params: { path: { secretname: 'DEPLOY_KEY' } },
      body: { data: 'data-browser-SECRET-4e6' },
    });
    const failure = error as unknown as { name?: string; status?: number; message?: string } | undefined;
    return { name: failure?.name, status: failure?.status, message: failure?.message, responseType: response.type };
  }, baseUrl);
}

describe('in Chromium, a redirect is never followed: the browser hides where it leads', () => {
  it.each([301, 302, 303, 307, 308])(
    '%i to another origin: an ApiError, and nothing reaches that origin',
    async (status) => {
      gitea.received.length = 0;
      gitea.answer = (_req, res) =>
        res.writeHead(status, { location: `${new URL(elsewhere.baseUrl).origin}/api/v1/collect` }).end();
      const outcome = await putSecret(gitea.baseUrl);
      expect(outcome).toEqual({
        name: 'ApiError',
        status: 0,
        message: `PUT /user/actions/secrets/{secretname} (updateUserSecret): redirect not followed: the browser hides where it leads, so it could leave 127.0.0.1:${gitea.port}; Gitea redirects the old name of a renamed repository or owner, so call the new name`,
        responseType: 'opaqueredirect',
      });
      expect(gitea.received.filter((request) => request.method === 'PUT')).toHaveLength(1);
      expect(elsewhere.received).toEqual([]);
    },
  );

  it('on the same origin too (a renamed repository): the same ApiError, the new path never asked for', async () => {
    gitea.received.length = 0;
    gitea.answer = (_req, res) => res.writeHead(307, { location: '/api/v1/user/actions/secrets/RENAMED' }).end();
    const outcome = await putSecret(gitea.baseUrl);
    expect([outcome.name, outcome.status, outcome.responseType]).toEqual(['ApiError', 0, 'opaqueredirect']);
    expect(gitea.received.map((request) => request.url)).not.toContain('/api/v1/user/actions/secrets/RENAMED');
  });
});
