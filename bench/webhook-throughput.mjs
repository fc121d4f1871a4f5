// The sandbox's writes with a webhook pointed at a receiver that takes 2 s to answer, against
// the same writes with no hook, in the same run: each `PATCH /repos/acme/rocket/pulls/43` sends a
// `body`, which fires a `pull_request` `edited` delivery to the system hook of `--webhook`. The
// deliveries are sent after the answers and must not hold them up: PASS when the throughput with
// the hook is at least GOAL of the throughput without, and no request failed. The two are loaded in
// turn for ROUNDS rounds, so that a machine's drift moves both alike: the ratio is the median of
// the rounds' ratios, each figure the median of its rounds.
import { createServer } from 'node:http';
import autocannon from 'autocannon';
import { loadInTurn, ratio, roundMedians, startMock } from './support.mjs';

const ROUNDS = 4;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8) / ROUNDS;
const GOAL = 0.8;
const RECEIVER_DELAY_MS = 2000;
const PATH = '/repos/acme/rocket/pulls/43';
const TOKEN = 'token 0123456789abcdef';
const LAUNCHER = new URL('../mock/dist/cli.mjs', import.meta.url).pathname;

/** A receiver that holds every delivery for RECEIVER_DELAY_MS before answering 200. */
async function slowReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      setTimeout(() => res.end('ok'), RECEIVER_DELAY_MS);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

function sandbox(extra, env = {}) {
  return {
    command: process.execPath,
    env,
    args: (port) => [LAUNCHER, 'sandbox', '--port', String(port), '--quiet', ...extra],
    base: (port) => `http://127.0.0.1:${port}/api/v1`,
  };
}

function cannon(url, seconds) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method: 'PATCH',
        connections: 20,
        duration: seconds,
        headers: { authorization: TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ body: 'The countdown skipped 3. This keeps every second.' }),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

export async function benchWebhooks() {
  const receiver = await slowReceiver();
  const runs = {
    'no hook': sandbox([]),
    'a hook to a slow receiver': sandbox(['--webhook', receiver.url], { GITEA_WEBHOOK_SECRET: 'bench' }),
  };
  const mocks = {};
  let rounds;
  try {
    for (const [name, spec] of Object.entries(runs))
      mocks[name] = await startMock(spec, '/repos/acme/rocket/keys/11001');
    const load = (name, seconds) => cannon(`${mocks[name].base}${PATH}`, seconds);
    rounds = await loadInTurn(Object.keys(runs), load, { rounds: ROUNDS, seconds: DURATION, warmUp: 2 });
  } finally {
    await Promise.all(Object.values(mocks).map((mock) => mock.stop()));
    await receiver.close();
  }
  const { results, ratio: rounded } = roundMedians(rounds);
  const failed = (r) => r.errors + r.non2xx;
  console.log(
    `\n## PATCH ${PATH} in the sandbox (each fires a delivery), 20 connections, ${ROUNDS} rounds of ${DURATION} s each, in turn (after a warm-up; medians of the rounds); the receiver answers after ${RECEIVER_DELAY_MS / 1000} s`,
  );
  for (const [name, r] of Object.entries(results))
    console.log(
      `${name.padEnd(26)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   failed ${failed(r)}`,
    );
  console.log(`deliveries the slow receiver got: ${receiver.received()}`);
  const base = results['no hook'];
  const hooked = results['a hook to a slow receiver'];
  const share = rounded('a hook to a slow receiver', 'no hook');
  const pass = share >= GOAL && failed(base) + failed(hooked) === 0;
  console.log(
    `${pass ? 'PASS' : 'FAIL'}: throughput with the hook / without ${share.toFixed(2)} (goal >= ${GOAL.toFixed(2)}), p99 ${ratio(hooked.p99, base.p99)}, failed requests ${failed(base) + failed(hooked)}`,
  );
  return pass;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchWebhooks()) ? 0 : 1;
