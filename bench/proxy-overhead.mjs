// Proxy overhead per request: GET at 50 connections against a local upstream directly and through
// `gitea-mock proxy` (which checks the request and the answer against the document on the way).
// Two upstreams: a bare keep-alive server with a fixed conforming answer (the proxy's whole cost
// shows), and the examples mock (an upstream that does some work per request, as a real one does).
// With the bare upstream, a bare Node pass-through proxy (no checks) shows what any proxy costs.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { AUTH, proxyTo, ratio, startMock, verdict } from './support.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const PATH = '/repos/acme/rocket/keys/11001';
const ECHO = fileURLToPath(new URL('./echo-server.mjs', import.meta.url));
const BARE_PROXY = fileURLToPath(new URL('./bare-proxy.mjs', import.meta.url));

function cannon(url) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 50, duration: DURATION, headers: AUTH }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** A helper server in a child process (so that its CPU time is its own) that prints its port. */
async function startChild(script, ...args) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) =>
    child.stdout.once('data', (data) => resolve(Number(String(data).trim()))),
  );
  return { origin: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

async function measure(url) {
  await cannon(url).catch(() => undefined); // warm-up, same length
  const result = await cannon(url);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export async function benchProxy() {
  const echo = await startChild(ECHO);
  const examples = await startMock('gitea-mock', PATH);
  const upstreams = [
    ['bare upstream', echo.origin, `${echo.origin}/api/v1`],
    ['examples mock upstream', new URL(examples.base).origin, examples.base],
  ];
  console.log(`\n## Proxy overhead: GET ${PATH}, 50 connections, ${DURATION} s each (after a warm-up)`);
  const passed = [];
  const show = (name, r) =>
    console.log(
      `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   errors ${r.errors}   non-2xx ${r.non2xx}`,
    );
  for (const [label, origin, base] of upstreams) {
    const proxy = await startMock(proxyTo(origin), PATH);
    const direct = await measure(`${base}${PATH}`);
    const proxied = await measure(`${proxy.base}${PATH}`);
    await proxy.stop();
    show(`${label}, direct`, direct);
    show(`${label}, through gitea-mock proxy`, proxied);
    if (origin === echo.origin) {
      const bare = await startChild(BARE_PROXY, origin);
      const relayed = await measure(`${bare.origin}/api/v1${PATH}`);
      bare.stop();
      show(`${label}, through a bare Node proxy`, relayed);
      console.log(`per-request time, bare Node proxy / direct: ${ratio(direct.rps, relayed.rps)}`);
      // What the checks cost above any proxy's relaying.
      passed.push(
        verdict(
          'per-request time gitea-mock proxy / bare Node proxy, bare upstream',
          relayed.rps / proxied.rps,
          'at most',
          2,
        ),
      );
      console.log(`per-request time through gitea-mock proxy / direct, ${label}: ${ratio(direct.rps, proxied.rps)}`);
    } else {
      // Per-request time is the inverse of throughput at a fixed number of connections.
      passed.push(
        verdict(
          `per-request time through gitea-mock proxy / direct, ${label}`,
          direct.rps / proxied.rps,
          'at most',
          1.5,
        ),
      );
    }
  }
  await examples.stop();
  echo.stop();
  return passed.every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchProxy()) ? 0 : 1;
