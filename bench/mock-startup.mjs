// Start-up time to the first answer: `npm start` and the gitea-mock launcher alone (with the
// examples and as the sandbox) against `prism mock -v error`, in alternating runs. dist/ is current (prebench builds it), so `npm start`
// pays npm and the staleness check, not a build.
import { median, MOCKS, ratio, startMock } from './support.mjs';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const PROBE = '/repos/acme/rocket/keys/11001';
const CONTENDERS = ['npm start', ...Object.keys(MOCKS)];

export async function benchStartup() {
  const times = Object.fromEntries(CONTENDERS.map((name) => [name, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const name of CONTENDERS) {
      const mock = await startMock(name, PROBE);
      times[name].push(mock.startupMs);
      await mock.stop();
    }
  }
  const [npmStart, ours, baseline] = ['npm start', 'gitea-mock', 'prism mock -v error'].map((name) =>
    median(times[name]),
  );
  console.log(`\n## Mock start-up to first answer (median of ${RUNS})`);
  for (const [name, values] of Object.entries(times)) {
    console.log(
      `${name.padEnd(22)} ${median(values).toFixed(0).padStart(6)} ms   (runs: ${values.map((v) => v.toFixed(0)).join(', ')})`,
    );
  }
  console.log(`ratio gitea-mock / prism: ${ratio(ours, baseline)} (lower is faster; goal: gitea-mock <= 1500 ms)`);
  console.log(
    `ratio npm start / gitea-mock: ${ratio(npmStart, ours)}, npm start / prism: ${ratio(npmStart, baseline)} (goal: npm start <= 1500 ms: ${npmStart <= 1500 ? 'met' : 'NOT met'})`,
  );
  return { npmStart, ours, baseline };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();
