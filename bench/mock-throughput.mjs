// GET throughput at concurrency 50 with p99 latency: gitea-mock with the examples and as the
// sandbox, against `prism mock -v error`. The three run at once, loaded in turn for ROUNDS rounds:
// a machine whose speed drifts during the run (other work on it) moves each round's three alike,
// so each ratio is the median of the rounds' ratios, and each figure the median of its rounds.
import autocannon from 'autocannon';
import { AUTH, loadInTurn, MOCKS, ratio, roundMedians, startMock, verdict } from './support.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = 4;
const PATH = '/repos/acme/rocket/keys/11001';

function cannon(url, seconds) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 50, duration: seconds, headers: AUTH }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

export async function benchThroughput() {
  const names = Object.keys(MOCKS);
  const mocks = {};
  let rounds;
  try {
    for (const name of names) mocks[name] = await startMock(name, PATH);
    const load = (name, seconds) => cannon(`${mocks[name].base}${PATH}`, seconds);
    rounds = await loadInTurn(names, load, { rounds: ROUNDS, seconds: DURATION / ROUNDS, warmUp: DURATION / 2 });
  } finally {
    await Promise.all(Object.values(mocks).map((mock) => mock.stop()));
  }
  const { results, ratio: rounded } = roundMedians(rounds);
  console.log(
    `\n## GET ${PATH}, 50 connections, ${ROUNDS} rounds of ${DURATION / ROUNDS} s each, in turn (after a warm-up); medians of the rounds`,
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   errors ${r.errors}   non-2xx ${r.non2xx}`,
    );
  }
  const [ours, sandbox, prism] = ['gitea-mock', 'gitea-mock sandbox', 'prism mock -v error'];
  console.log(`ratio gitea-mock / prism: p99 ${ratio(results[ours].p99, results[prism].p99)} (no goal)`);
  // A sandbox's read changes nothing: it answers nearly as fast as the fixed examples.
  const passed = [
    verdict('throughput sandbox / examples', rounded(sandbox, ours), 'at least', 0.9),
    verdict('throughput gitea-mock / prism', rounded(ours, prism), 'at least', 3),
    verdict('throughput sandbox / prism', rounded(sandbox, prism), 'at least', 3),
  ];
  return passed.every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchThroughput()) ? 0 : 1;
