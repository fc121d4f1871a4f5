// Per-request cost of the client: GET + JSON parse against a local keep-alive server (a child
// process, see echo-server.mjs), 32 requests in flight. Baselines in the same run: raw fetch, bare
// openapi-fetch, which the client wraps, and openapi-fetch given a per-call timeout signal, as the
// client sets one up when asked for a timeout (fetch makes any signal cost a share of each
// request); and the client with a 30 s timeout. Clients alternate in short rounds, and a ratio is the
// median over the rounds of the ratio within each round: two clients measured a second apart see
// the same machine, so drift and noisy neighbours cancel out of the ratio, if not out of the times.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import createClient from 'openapi-fetch';
import { createGiteaClient } from '../dist/index.js';
import { median } from './support.mjs';

const TOTAL = Number(process.env.BENCH_CLIENT_REQUESTS ?? 4_000);
const WARMUP = 2_000;
const ROUNDS = 15;
const CONCURRENCY = 32;
const PATH = '/repos/{owner}/{repo}/keys/{id}';
const PARAMS = { params: { path: { owner: 'acme', repo: 'rocket', id: 11001 } } };

function clients(base) {
  const url = `${base}/repos/acme/rocket/keys/11001`;
  const bare = createClient({ baseUrl: base, headers: { Authorization: 'token x' } });
  const ours = createGiteaClient({ baseUrl: base, auth: { token: 'x' } });
  const timed = createGiteaClient({ baseUrl: base, auth: { token: 'x' }, timeoutMs: 30_000 });
  return {
    'raw fetch': async () => (await fetch(url, { headers: { authorization: 'token x' } })).json(),
    'bare openapi-fetch': async () => (await bare.GET(PATH, PARAMS)).data,
    'openapi-fetch + timeout': async () =>
      (await bare.GET(PATH, { ...PARAMS, signal: AbortSignal.timeout(30_000) })).data,
    'gitea-contract': async () => (await ours.GET(PATH, PARAMS)).data,
    'gitea-contract, 30 s timeout': async () => (await timed.GET(PATH, PARAMS)).data,
  };
}

/** µs per request (wall time over count, so the inverse of throughput) for `count` calls, CONCURRENCY at a time. */
async function drive(call, count) {
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      const data = await call();
      if (data?.id !== 11001) throw new Error(`unexpected answer: ${JSON.stringify(data)}`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return ((performance.now() - started) * 1000) / count;
}

export async function benchClientSpeed() {
  const server = spawn(process.execPath, [fileURLToPath(new URL('echo-server.mjs', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise((resolve, reject) => {
      server.stdout.once('data', resolve);
      server.once('exit', (code) => reject(new Error(`echo server exited (${code})`)));
    });
    const contenders = Object.entries(clients(`http://127.0.0.1:${String(port).trim()}/api/v1`));
    for (const [, call] of contenders) await drive(call, WARMUP);
    const times = Object.fromEntries(contenders.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with a different client, so none always runs first or last.
      for (let i = 0; i < contenders.length; i++) {
        const [name, call] = contenders[(round + i) % contenders.length];
        times[name].push(await drive(call, TOTAL));
      }
    }
    const us = Object.fromEntries(Object.entries(times).map(([name, values]) => [name, median(values)]));
    console.log(
      `\n## Client GET ${PATH} + JSON, ${TOTAL} requests per client and round, concurrency ${CONCURRENCY}, ${ROUNDS} rounds`,
    );
    for (const [name, values] of Object.entries(times)) {
      console.log(
        `${name.padEnd(28)} ${us[name].toFixed(1).padStart(6)} µs/request median   (rounds: ${values.map((v) => v.toFixed(0)).join(', ')})`,
      );
    }
    const compare = (name, baseline, goal) => {
      const ratios = times[name].map((t, round) => t / times[baseline][round]).sort((a, b) => a - b);
      const r = median(ratios);
      const verdict = goal === undefined ? '' : `; goal <= ${goal.toFixed(2)}: ${r <= goal ? 'met' : 'NOT met'}`;
      console.log(
        `ratio ${name} / ${baseline}, median of the rounds' ratios: ${r.toFixed(2)} (quartiles ${ratios[Math.floor(ROUNDS / 4)].toFixed(2)}–${ratios[Math.floor((3 * ROUNDS) / 4)].toFixed(2)}${verdict})`,
      );
    };
    compare('gitea-contract', 'raw fetch', 1.1);
    compare('gitea-contract', 'bare openapi-fetch', 1.03);
    compare('gitea-contract, 30 s timeout', 'openapi-fetch + timeout');
    return us;
  } finally {
    server.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchClientSpeed();
