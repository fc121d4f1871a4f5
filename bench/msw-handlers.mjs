// What an answer costs through `gitea-mock/msw` (setupServer: fetch intercepted in-process, no
// socket) against the same front behind the `gitea-mock` server on loopback, both asked with
// fetch for the same requests, at the same concurrency, in the same run. Then what the handlers
// weigh in a browser app: `gitea-mock/msw` bundled by esbuild for the browser (its `browser` build,
// msw left out as the app's own), minified, and gzipped at level 9.
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { setupServer } from 'msw/node';
import { createGiteaHandlers } from '../mock/dist/msw.mjs';
import { startMockServer } from '../mock/dist/server.mjs';
import { ratio, ROOT } from './support.mjs';

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

/** `gitea-mock/msw` as a browser app's bundler takes it: bytes minified, and gzipped. */
async function browserSize() {
  const result = await build({
    stdin: { contents: "export { createGiteaHandlers } from 'gitea-mock/msw';", resolveDir: ROOT, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    external: ['msw'],
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
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
    console.log(
      `\n## gitea-mock/msw: ${REQUESTS} requests (a key, a page of organizations, a hook edit), concurrency ${CONCURRENCY}, the sandbox`,
    );
    console.log(
      `server on loopback   ${(overSocket.perRequestMs * 1000).toFixed(0).padStart(6)} µs per request   failures ${overSocket.failures}`,
    );
    console.log(
      `MSW setupServer      ${(inProcess.perRequestMs * 1000).toFixed(0).padStart(6)} µs per request   failures ${inProcess.failures}`,
    );
    console.log(
      `ratio MSW / server per request: ${ratio(inProcess.perRequestMs, overSocket.perRequestMs)} (no goal; the front is the same code)`,
    );
    const size = await browserSize();
    const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(
      `browser build (esbuild, platform browser, minified, msw left out): ${kib(size.min)}, ${kib(size.gzip)} gzipped`,
    );
    return overSocket.failures + inProcess.failures === 0;
  } finally {
    await gitea.close();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchMswHandlers()) ? 0 : 1;
