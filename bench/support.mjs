// Shared by the benchmarks: start the mocks under comparison and wait for their first answer.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/free-port.mjs';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DOCUMENT = fileURLToPath(new URL('../openapi.yaml', import.meta.url));
const LAUNCHER = fileURLToPath(new URL('../mock/dist/cli.mjs', import.meta.url));
const PRISM_CLI = fileURLToPath(new URL('../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));

export const AUTH = { authorization: 'token 0123456789abcdef' };

/** The contenders: our launcher with the examples and as the sandbox, and Prism's CLI at its quietest on the same document. */
export const MOCKS = {
  'gitea-mock': {
    command: process.execPath,
    args: (port) => [LAUNCHER, '--port', String(port), '--quiet'],
    base: (port) => `http://127.0.0.1:${port}/api/v1`,
  },
  'gitea-mock sandbox': {
    command: process.execPath,
    args: (port) => [LAUNCHER, 'sandbox', '--port', String(port), '--quiet'],
    base: (port) => `http://127.0.0.1:${port}/api/v1`,
  },
  'prism mock -v error': {
    command: process.execPath,
    args: (port) => [PRISM_CLI, 'mock', DOCUMENT, '--host', '127.0.0.1', '--port', String(port), '-v', 'error'],
    base: (port) => `http://127.0.0.1:${port}`,
  },
};

/** The README's `npm start`: npm, the check that dist/ is current, then the same launcher. */
export const NPM_START = {
  command: process.platform === 'win32' ? 'npm.cmd' : 'npm',
  args: (port) => ['start', '--silent', '--', '--port', String(port), '--quiet'],
  base: (port) => `http://127.0.0.1:${port}/api/v1`,
};

/** gitea-mock as a proxy in front of `upstream` (an origin). */
export function proxyTo(upstream) {
  return {
    command: process.execPath,
    args: (port) => [LAUNCHER, 'proxy', upstream, '--port', String(port), '--quiet'],
    base: (port) => `http://127.0.0.1:${port}/api/v1`,
  };
}

/** gitea-mock's sandbox keeping its worlds in `state`: a folder, or a PostgreSQL URL. */
export function sandboxOn(state) {
  return {
    command: process.execPath,
    args: (port) => [LAUNCHER, 'sandbox', '--port', String(port), '--quiet', '--state', state],
    base: (port) => `http://127.0.0.1:${port}/api/v1`,
  };
}

const STARTABLE = { ...MOCKS, 'npm start': NPM_START };

/** Spawns a mock (by name, or a spec like proxyTo's); resolves when `probePath` answers 200, with the milliseconds that took. */
export async function startMock(name, probePath, timeoutMs = 30_000) {
  const port = await freePort();
  const mock = typeof name === 'string' ? STARTABLE[name] : name;
  const started = performance.now();
  // Its own process group, so stopping reaches the server behind npm too.
  const child = spawn(mock.command, mock.args(port), {
    cwd: ROOT,
    env: { ...process.env, ...mock.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const base = mock.base(port);
  while (performance.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`${mock.args(port).join(' ')} exited: ${stderr}`);
    try {
      const response = await fetch(`${base}${probePath}`, { headers: AUTH });
      await response.arrayBuffer();
      if (response.status === 200) {
        return {
          base,
          pid: child.pid,
          startupMs: performance.now() - started,
          stop: () =>
            new Promise((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.once('exit', resolve);
              process.kill(-child.pid, 'SIGTERM');
            }),
        };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.kill(-child.pid, 'SIGKILL');
  throw new Error(`${mock.args(port).join(' ')} did not answer within ${timeoutMs} ms`);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Each of `names` loaded in turn (`load(name, seconds)`): a warm-up of `warmUp` s each where given
 * (its failures ignored), then `rounds` rounds of `seconds` each, so that a machine's drift moves
 * each alike. The rounds' results, a round each `{ [name]: result }`, for `roundMedians`.
 */
export async function loadInTurn(names, load, { rounds, seconds, warmUp }) {
  if (warmUp !== undefined) for (const name of names) await load(name, warmUp).catch(() => undefined);
  const measured = [];
  for (let round = 0; round < rounds; round++) {
    const each = {};
    for (const name of names) each[name] = await load(name, seconds);
    measured.push(each);
  }
  return measured;
}

/**
 * Autocannon's results of servers loaded in turn, a round each `{ [name]: result }`: each server's
 * medians over the rounds (errors and timeouts together, non-2xx apart), and `ratio(a, b)`, the
 * median over the rounds of `a`'s requests per second over `b`'s.
 */
export function roundMedians(rounds) {
  const names = Object.keys(rounds[0] ?? {});
  const results = Object.fromEntries(
    names.map((name) => {
      const of = rounds.map((round) => round[name]);
      return [
        name,
        {
          rps: median(of.map((result) => result.requests.average)),
          p50: median(of.map((result) => result.latency.p50)),
          p99: median(of.map((result) => result.latency.p99)),
          errors: of.reduce((sum, result) => sum + result.errors + result.timeouts, 0),
          non2xx: of.reduce((sum, result) => sum + result.non2xx, 0),
        },
      ];
    }),
  );
  const ratio = (a, b) => median(rounds.map((round) => round[a].requests.average / round[b].requests.average));
  return { results, ratio };
}

/** Resident memory of a process in MiB, from /proc (Linux). */
export async function rssMiB(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

export function ratio(value, baseline) {
  return (value / baseline).toFixed(2);
}

/**
 * Prints a same-run ratio against its goal as a PASS or FAIL line and says whether it passed:
 * `at most` for a cost (lower is better), `at least` for a speed.
 */
export function verdict(what, value, bound, goal) {
  const pass = bound === 'at most' ? value <= goal : value >= goal;
  console.log(
    `${pass ? 'PASS' : 'FAIL'}: ${what} ${value.toFixed(2)} (goal ${bound === 'at most' ? '<=' : '>='} ${goal.toFixed(2)})`,
  );
  return pass;
}
