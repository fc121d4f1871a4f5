// What an answer costs through `gitea-mock/msw` (setupServer: fetch intercepted in-process, no
// socket) against the same front behind the `gitea-mock` server on loopback, both asked with
// fetch for the same requests, at the same concurrency, in the same run.
import { setupServer } from 'msw/node';
import { createGiteaHandlers } from '../mock/dist/msw.mjs';
import { startMockServer } from '../mock/dist/server.mjs';
import { ratio } from './support.mjs';

const REQUESTS = Number(process.env.BENCH_MSW_REQUESTS ?? 4_000);
const CONCURRENCY = 10;
const AUTH = { authorization: 'token bench' };
const ASKS = [
  { path: '/repos/acme/rocket/keys/11001' },
  { path: '/admin/orgs?limit=2&page=2' },
  { path: '/repos/acme/rocket/hooks/4001', method: 'PATCH', body: '{"active":true,"events":["push"]}' },
];

async function drive(base) {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const ask = ASKS[next++ % ASKS.length];
        const headers = ask.body ? { ...AUTH, 'content-type': 'application/json' } : AUTH;
        const response = await fetch(`${base}${ask.path}`, { method: ask.method ?? 'GET', headers, body: ask.body });
        await response.arrayBuffer();
        if (response.status >= 300) failures++;
      }
    }),
  );
  return { perRequestMs: (performance.now() - started) / REQUESTS, failures };
}

export async function benchMswHandlers() {
  const server = await startMockServer({ port: 0, sandbox: {} });
  const base = 'https://gitea.example.org/api/v1';
  const gitea = createGiteaHandlers({ baseUrl: base, sandbox: true });
  const msw = setupServer(...gitea.handlers);
  try {
    // Warm-up of both: compiled validators, the first world.
    await drive(server.baseUrl);
    const overSocket = await drive(server.baseUrl);
    msw.listen({ onUnhandledRequest: 'bypass' });
    await drive(base);
    const inProcess = await drive(base);
    msw.close();
    console.log(`\n## gitea-mock/msw: ${REQUESTS} requests (a key, a page of organizations, a hook edit), concurrency ${CONCURRENCY}, the sandbox`);
    console.log(`server on loopback   ${(overSocket.perRequestMs * 1000).toFixed(0).padStart(6)} µs per request   failures ${overSocket.failures}`);
    console.log(`MSW setupServer      ${(inProcess.perRequestMs * 1000).toFixed(0).padStart(6)} µs per request   failures ${inProcess.failures}`);
    console.log(`ratio MSW / server per request: ${ratio(inProcess.perRequestMs, overSocket.perRequestMs)} (no goal; the front is the same code)`);
    return overSocket.failures + inProcess.failures === 0;
  } finally {
    await gitea.close();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchMswHandlers()) ? 0 : 1;
