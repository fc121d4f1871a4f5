// Proxy overhead per request: GET at 50 connections against a local upstream directly and through
// `gitea-mock proxy` (which checks the request and the answer against the document on the way).
// Two upstreams: a bare keep-alive server with a fixed conforming answer (the proxy's whole cost
// shows), and the examples mock (an upstream that does some work per request, as a real one does).
// A bare Node pass-through proxy (no checks) shows what any proxy costs: with the bare upstream,
// above it; with the examples mock, the least any Node proxy can cost against a direct request.
// The servers of an upstream are loaded in turn for ROUNDS rounds; each ratio is the median of
// the rounds' ratios, each figure the median of its rounds.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { AUTH, loadInTurn, proxyTo, roundMedians, startMock, verdict } from './support.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const PATH = '/repos/acme/rocket/keys/11001';
const ECHO = fileURLToPath(new URL('./echo-server.mjs', import.meta.url));
const BARE_PROXY = fileURLToPath(new URL('./bare-proxy.mjs', import.meta.url));

const ROUNDS = 4;

function cannon(url, seconds) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 50, duration: seconds, headers: AUTH }, (error, result) =>
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

/** The URLs (`{ name: url }`) loaded in turn for ROUNDS rounds after a warm-up: a machine's drift moves each round's alike. */
async function measure(urls) {
  const load = (name, seconds) => cannon(urls[name], seconds);
  const options = { rounds: ROUNDS, seconds: DURATION / ROUNDS, warmUp: DURATION / 2 };
  return roundMedians(await loadInTurn(Object.keys(urls), load, options));
}

export async function benchProxy() {
  const echo = await startChild(ECHO);
  const examples = await startMock('gitea-mock', PATH);
  const upstreams = [
    ['bare upstream', echo.origin, `${echo.origin}/api/v1`],
    ['examples mock upstream', new URL(examples.base).origin, examples.base],
  ];
  console.log(
    `\n## Proxy overhead: GET ${PATH}, 50 connections, ${ROUNDS} rounds of ${DURATION / ROUNDS} s each, in turn (after a warm-up); medians of the rounds`,
  );
  const passed = [];
  const show = (name, r) =>
    console.log(
      `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   errors ${r.errors}   non-2xx ${r.non2xx}`,
    );
  for (const [label, origin, base] of upstreams) {
    const proxy = await startMock(proxyTo(origin), PATH);
    const bare = await startChild(BARE_PROXY, origin);
    const urls = {
      direct: `${base}${PATH}`,
      'through gitea-mock proxy': `${proxy.base}${PATH}`,
      'through a bare Node proxy': `${bare.origin}/api/v1${PATH}`,
    };
    let measured;
    try {
      measured = await measure(urls);
    } finally {
      await proxy.stop();
      bare.stop();
    }
    const { results, ratio: rounded } = measured;
    for (const [name, r] of Object.entries(results)) show(`${label}, ${name}`, r);
    // Per-request time is the inverse of throughput at a fixed number of connections.
    const cost = (slower) => rounded('direct', slower);
    console.log(
      `per-request time, bare Node proxy / direct, ${label}: ${cost('through a bare Node proxy').toFixed(2)}`,
    );
    if (origin === echo.origin) {
      // What the checks cost above any proxy's relaying.
      passed.push(
        verdict(
          'per-request time gitea-mock proxy / bare Node proxy, bare upstream',
          rounded('through a bare Node proxy', 'through gitea-mock proxy'),
          'at most',
          2,
        ),
      );
      console.log(
        `per-request time through gitea-mock proxy / direct, ${label}: ${cost('through gitea-mock proxy').toFixed(2)}`,
      );
    } else {
      passed.push(
        verdict(
          `per-request time through gitea-mock proxy / direct, ${label}`,
          cost('through gitea-mock proxy'),
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
