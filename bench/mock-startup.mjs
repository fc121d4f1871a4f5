// Start-up time to the first answer: gitea-mock against `prism mock -v error`, alternating runs.
import { median, MOCKS, ratio, startMock } from './support.mjs';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const PROBE = '/repos/acme/rocket/keys/11001';

export async function benchStartup() {
  const times = Object.fromEntries(Object.keys(MOCKS).map((name) => [name, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const name of Object.keys(MOCKS)) {
      const mock = await startMock(name, PROBE);
      times[name].push(mock.startupMs);
      await mock.stop();
    }
  }
  const ours = median(times['gitea-mock']);
  const baseline = median(times['prism mock -v error']);
  console.log(`\n## Mock start-up to first answer (median of ${RUNS})`);
  for (const [name, values] of Object.entries(times)) {
    console.log(`${name.padEnd(22)} ${median(values).toFixed(0).padStart(6)} ms   (runs: ${values.map((v) => v.toFixed(0)).join(', ')})`);
  }
  console.log(`ratio gitea-mock / prism: ${ratio(ours, baseline)} (lower is faster; goal: gitea-mock <= 1500 ms)`);
  return { ours, baseline };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();
