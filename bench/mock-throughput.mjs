// GET throughput at concurrency 50 with p99 latency: gitea-mock with the examples and as the
// sandbox, against `prism mock -v error`.
import autocannon from 'autocannon';
import { AUTH, MOCKS, ratio, startMock, verdict } from './support.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const PATH = '/repos/acme/rocket/keys/11001';

function cannon(url) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 50, duration: DURATION, headers: AUTH }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

export async function benchThroughput() {
  const results = {};
  for (const name of Object.keys(MOCKS)) {
    const mock = await startMock(name, PATH);
    await cannon(`${mock.base}${PATH}`).catch(() => undefined); // warm-up, same length
    const result = await cannon(`${mock.base}${PATH}`);
    await mock.stop();
    results[name] = {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts,
      non2xx: result.non2xx,
    };
  }
  console.log(`\n## GET ${PATH}, 50 connections, ${DURATION} s each (after a warm-up)`);
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   errors ${r.errors}   non-2xx ${r.non2xx}`,
    );
  }
  const ours = results['gitea-mock'];
  const sandbox = results['gitea-mock sandbox'];
  const baseline = results['prism mock -v error'];
  console.log(`ratio gitea-mock / prism: p99 ${ratio(ours.p99, baseline.p99)} (no goal)`);
  // A sandbox's read changes nothing: it answers nearly as fast as the fixed examples.
  const passed = [
    verdict('throughput sandbox / examples', sandbox.rps / ours.rps, 'at least', 0.9),
    verdict('throughput gitea-mock / prism', ours.rps / baseline.rps, 'at least', 3),
    verdict('throughput sandbox / prism', sandbox.rps / baseline.rps, 'at least', 3),
  ];
  return passed.every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchThroughput()) ? 0 : 1;
