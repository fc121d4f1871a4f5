// The sandbox on its two stores, in the same run: requests per second of one process on a state
// folder (the baseline), one on PostgreSQL, two on one PostgreSQL with the load split between
// them, and, as the control, two each on a database of its own, for reads and for writes; and the
// latency a write gains from the database, one write at a time. PostgreSQL is a server of this machine's (scripts/postgres.mjs) with its defaults: every
// commit flushed to disk, as the folder flushes every save. The configurations run at once and are
// loaded in turn for ROUNDS rounds, each process warmed by WARM_UP requests first; each ratio is
// the median of the rounds' ratios.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startPostgres } from '../scripts/postgres.mjs';
import { loadInTurn, ratio, roundMedians, sandboxOn, startMock, verdict } from './support.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = 4;
const CONNECTIONS = 40;
/** Writes go to this many worlds (credentials), as a team's would. */
const WORLDS = 10;
const SEQUENTIAL_WRITES = 200;
/**
 * Requests each process answers before the rounds. V8 optimises a function after enough calls, not after a time:
 * warmed for as long as one process, each of two gets a fraction of the calls, and the rounds measure its compiler
 * instead of its writes.
 */
const WARM_UP = { GET: 40_000, PATCH: 15_000 };
const READ = '/teams/12001/members';
const WRITE = '/orgs/acme/labels/5001';
/** The control: two processes that share nothing, each on a database of its own, the load split alike. */
const APART = 'PostgreSQL, 2 apart';
/** Each configuration's stores, one a process: a folder's path, or the name of a database of the bench's server. */
const STORES = {
  'folder, 1 process': [{ folder: 'state' }],
  'PostgreSQL, 1 process': [{ database: 'one' }],
  'PostgreSQL, 2 processes': [{ database: 'two' }, { database: 'two' }],
  [APART]: [{ database: 'apart-1' }, { database: 'apart-2' }],
};

/** `method` at `connections` at once for `seconds`, or until `amount` requests are answered. */
function cannon(base, method, connections, { seconds, amount }) {
  let n = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${base}${method === 'GET' ? READ : WRITE}`,
        connections,
        ...(amount === undefined ? { duration: seconds } : { amount }),
        requests: [
          {
            method,
            setupRequest: (request) => ({
              ...request,
              headers: { authorization: `token bench-${n++ % WORLDS}`, 'content-type': 'application/json' },
              ...(method === 'GET' ? {} : { body: `{"name":"label-${n}"}` }),
            }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** Writes each world once, so that they exist before they are read, as a team's do. */
async function prepareWorlds(base) {
  for (let world = 0; world < WORLDS; world++) {
    const response = await fetch(`${base}${WRITE}`, {
      method: 'PATCH',
      headers: { authorization: `token bench-${world}`, 'content-type': 'application/json' },
      body: '{"name":"label"}',
    });
    await response.arrayBuffer();
  }
}

/** `method` at CONNECTIONS at once, split evenly between the processes, as one autocannon result. */
async function load(bases, method, until) {
  const share = Math.floor(CONNECTIONS / bases.length);
  const results = await Promise.all(bases.map((base) => cannon(base, method, share, until)));
  const sum = (of) => results.reduce((total, result) => total + of(result), 0);
  return {
    requests: { average: sum((result) => result.requests.average), total: sum((result) => result.requests.total) },
    latency: {
      p50: Math.max(...results.map((r) => r.latency.p50)),
      p99: Math.max(...results.map((r) => r.latency.p99)),
    },
    errors: sum((result) => result.errors),
    timeouts: sum((result) => result.timeouts),
    non2xx: sum((result) => result.non2xx),
  };
}

/** The median time of one write, one after another: what a write costs the store. */
async function writeLatency(base) {
  const times = [];
  for (let n = 0; n < SEQUENTIAL_WRITES; n++) {
    const started = performance.now();
    const response = await fetch(`${base}${WRITE}`, {
      method: 'PATCH',
      headers: { authorization: 'token bench-latency', 'content-type': 'application/json' },
      body: `{"name":"label-${n}"}`,
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`a write answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)] };
}

export async function benchSandboxPostgres() {
  const folder = await mkdtemp(join(tmpdir(), 'gitea-contract-bench-state-'));
  const postgres = await startPostgres();
  const results = {};
  const ratios = {};
  const mocks = [];
  // Commits the database counted, read after its statistics settle (each session reports within a second).
  const databases = Object.fromEntries(
    Object.entries(STORES)
      .map(([name, stores]) => [name, [...new Set(stores.map((store) => store.database).filter(Boolean))]])
      .filter(([, names]) => names.length > 0),
  );
  const commits = async () => {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const counted = {};
    for (const [name, names] of Object.entries(databases)) {
      counted[name] = 0;
      for (const database of names) {
        const [row] = await postgres.query(database, 'SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [
          database,
        ]);
        counted[name] += Number(row.xact_commit);
      }
    }
    return counted;
  };
  const perCommit = {};
  try {
    const states = new Map();
    const bases = {};
    for (const [name, stores] of Object.entries(STORES)) {
      bases[name] = [];
      for (const { folder: path, database } of stores) {
        const opened = states.has(database ?? path);
        if (!opened)
          states.set(database ?? path, database ? await postgres.createDatabase(database) : join(folder, path));
        const mock = await startMock(sandboxOn(states.get(database ?? path)), READ);
        mocks.push(mock);
        bases[name].push(mock.base);
        // Once a store: its other processes find the worlds there.
        if (!opened) await prepareWorlds(mock.base);
      }
    }
    // Loaded in turn, round by round, so that a machine's drift moves each configuration alike.
    for (const method of ['GET', 'PATCH']) {
      const loaded = (name, seconds) => load(bases[name], method, { seconds });
      // Warmed up here, before the commits are first counted.
      for (const name of Object.keys(bases)) await load(bases[name], method, { amount: WARM_UP[method] });
      const before = method === 'PATCH' ? await commits() : undefined;
      const rounds = await loadInTurn(Object.keys(bases), loaded, { rounds: ROUNDS, seconds: DURATION / ROUNDS });
      if (before) {
        const after = await commits();
        for (const name of Object.keys(databases)) {
          const writes = rounds.reduce((sum, round) => sum + round[name].requests.total, 0);
          perCommit[name] = { writes, commits: after[name] - before[name] };
        }
      }
      const medians = roundMedians(rounds);
      for (const [name, r] of Object.entries(medians.results))
        results[name] = { ...results[name], [method]: { rps: r.rps, p99: r.p99, failed: r.errors + r.non2xx } };
      ratios[method] = medians.ratio;
    }
    for (const [name, each] of Object.entries(bases)) results[name].latency = await writeLatency(each[0]);
  } finally {
    await Promise.all(mocks.map((mock) => mock.stop()));
    await postgres.close();
    await rm(folder, { recursive: true, force: true });
  }

  console.log(
    `\n## The sandbox on a folder and on PostgreSQL: GET ${READ} and PATCH ${WRITE}, ${CONNECTIONS} connections over ${WORLDS} worlds, ${ROUNDS} rounds of ${DURATION / ROUNDS} s each, in turn (after a warm-up); medians of the rounds`,
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(24)} reads ${r.GET.rps.toFixed(0).padStart(6)} req/s (p99 ${r.GET.p99} ms)   writes ${r.PATCH.rps.toFixed(0).padStart(6)} req/s (p99 ${r.PATCH.p99} ms)   one write at a time: p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms   failed ${r.GET.failed + r.PATCH.failed}`,
    );
  }
  const baseline = results['folder, 1 process'];
  for (const name of ['PostgreSQL, 1 process', 'PostgreSQL, 2 processes', APART]) {
    const r = results[name];
    console.log(
      `ratio ${name} / folder: reads ${ratios.GET(name, 'folder, 1 process').toFixed(2)}, writes ${ratios.PATCH(name, 'folder, 1 process').toFixed(2)}, write latency p50 ${ratio(r.latency.p50, baseline.latency.p50)} (+${(r.latency.p50 - baseline.latency.p50).toFixed(2)} ms from the database)`,
    );
  }
  for (const [name, { writes, commits: made }] of Object.entries(perCommit))
    console.log(`${name}: ${(writes / made).toFixed(2)} writes a commit (${writes} writes, ${made} commits)`);
  // Scaling out: the same total load through two processes on one database as through one.
  const [one, two] = ['PostgreSQL, 1 process', 'PostgreSQL, 2 processes'];
  // What the second process costs whatever it shares (the machine), and what sharing the database costs on top.
  for (const method of ['GET', 'PATCH'])
    console.log(
      `${method === 'GET' ? 'reads' : 'writes'}: two processes apart / one ${ratios[method](APART, one).toFixed(2)} (the second process), sharing one database / apart ${ratios[method](two, APART).toFixed(2)} (sharing)`,
    );
  const passed = [
    verdict('reads, PostgreSQL 2 processes / 1 process', ratios.GET(two, one), 'at least', 0.9),
    verdict('writes, PostgreSQL 2 processes / 1 process', ratios.PATCH(two, one), 'at least', 0.9),
  ];
  return passed.every(Boolean) && Object.values(results).every((r) => r.GET.failed + r.PATCH.failed === 0);
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchSandboxPostgres()) ? 0 : 1;
