// detectServer over real HTTP on loopback: a server that answers the two version endpoints as
// Gitea and Forgejo releases do (Forgejo's /api/forgejo/v1/version and its `+gitea-` suffix), and
// the mock itself, which answers as the Gitea release the contract describes.
import { describe, expect, it } from 'vitest';
import { startMockServer } from '../../mock/src/server.js';
import { ApiError, createGiteaClient, detectServer, SERVER_PROFILES } from '../../src/index.js';
import { json, raw, useFaultServer, type Handler } from '../support/fault-server.js';

const server = useFaultServer();

/** Answers both version endpoints, whichever of the two concurrent requests comes first. */
function versions({ api, forgejo }: { api: Handler; forgejo?: string }): void {
  const notFound = raw(404, 'Not found.\n', { 'content-type': 'text/plain;charset=utf-8' });
  const route: Handler = (req, res, body) =>
    (req.url?.startsWith('/api/forgejo/v1/') ? (forgejo ? json(200, { version: forgejo }) : notFound) : api)(
      req,
      res,
      body,
    );
  server.current.script(route, route);
}

const detect = (throwOnError = false) =>
  detectServer(createGiteaClient({ baseUrl: server.current.baseUrl, throwOnError }));

describe('detectServer', () => {
  it('tells Forgejo 11 by its own version endpoint, and names the version it gives', async () => {
    versions({ api: json(200, { version: '11.0.3+gitea-1.22.0' }), forgejo: '11.0.3+gitea-1.22.0' });
    expect(await detect()).toEqual({ family: 'forgejo', version: '11.0.3+gitea-1.22.0', profile: 'forgejo-11' });
    expect(server.current.received.map((r) => r.url).sort()).toEqual(['/api/forgejo/v1/version', '/api/v1/version']);
  });

  it('tells Gitea 1.27.1 and 1.25.4 apart, with a client that throws on the 404 of the Forgejo endpoint', async () => {
    versions({ api: json(200, { version: '1.27.1' }) });
    expect(await detect(true)).toEqual({ family: 'gitea', version: '1.27.1', profile: 'gitea-1.27' });
    versions({ api: json(200, { version: '1.25.4' }) });
    expect(await detect()).toEqual({ family: 'gitea', version: '1.25.4', profile: 'gitea-1.25' });
  });

  it('takes `+gitea-` for Forgejo when its own endpoint does not answer, and a pre-release for its release', async () => {
    versions({ api: json(200, { version: '12.0.0-dev-1459-5d2b46e2cb+gitea-1.22.0' }) });
    expect(await detect()).toMatchObject({ family: 'forgejo', profile: 'forgejo-12' });
    versions({ api: json(200, { version: '1.26.0+dev-12-gabcdef0' }) });
    expect(await detect()).toMatchObject({ family: 'gitea', profile: 'gitea-1.26' });
  });

  it('maps a release newer or older than every profile to the nearest, with a warning', async () => {
    versions({ api: json(200, { version: '1.29.0' }) });
    const newer = await detect();
    expect(newer).toMatchObject({ family: 'gitea', profile: 'gitea-1.27' });
    expect(newer.warning).toBe('Gitea 1.29.0 is newer than every profile: gitea-1.27, the newest, stands in for it');
    versions({ api: json(200, { version: '14.0.1+gitea-1.22.0' }), forgejo: '14.0.1+gitea-1.22.0' });
    expect(await detect()).toMatchObject({ family: 'forgejo', profile: 'forgejo-12', warning: expect.any(String) });
    versions({ api: json(200, { version: '1.22.6' }) });
    const older = await detect();
    expect(older).toMatchObject({ family: 'gitea', profile: 'gitea-1.24' });
    expect(older.warning).toContain('older than every profile');
  });

  it("maps gitea.com's commit hash to the newest Gitea profile, with a warning", async () => {
    versions({ api: json(200, { version: 'e5f1c0a7b2' }) });
    expect(await detect()).toEqual({
      family: 'gitea',
      version: 'e5f1c0a7b2',
      profile: SERVER_PROFILES.filter((p) => p.startsWith('gitea-')).at(-1),
      warning: 'Gitea e5f1c0a7b2 names no release: gitea-1.27, the newest profile, stands in for it',
    });
  });

  it('rejects with an ApiError where no Gitea API answers, or the answer names no version', async () => {
    versions({ api: raw(404, '<html>Page Not Found</html>', { 'content-type': 'text/html' }) });
    const missing = await detect().catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, path: '/version' });
    versions({ api: json(200, { name: 'not gitea' }) });
    await expect(detect()).rejects.toThrow('GET /version: 200 the answer names no version');
  });

  it('finds the Gitea release the mock stands for', async () => {
    const mock = await startMockServer({ port: 0 });
    try {
      const detected = await detectServer(createGiteaClient({ baseUrl: mock.baseUrl }));
      expect(detected).toMatchObject({ family: 'gitea', profile: 'gitea-1.27' });
      expect(detected.warning).toBeUndefined();
    } finally {
      await mock.close();
    }
  });
});
