// The README's `npm start` on the fresh checkout CI runs on, after `npm ci` (which builds dist/
// through the mock workspace's prepare script; `npm start` builds whatever is stale): it must
// listen and answer `GET /api/v1/admin/orgs` with the example organizations. Exits non-zero otherwise.
import { spawn } from 'node:child_process';

const TIMEOUT_MS = 120_000;
const START_LINE = /gitea-mock: \d+ operations on (http:\/\/\S+\/api\/v1) /;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const started = performance.now();
// Its own process group, so stopping it reaches the launcher behind npm.
const child = spawn(npm, ['start', '--', '--port', '0', '--quiet'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let output = '';
child.stdout.on('data', (chunk) => (output += chunk));
child.stderr.on('data', (chunk) => (output += chunk));

function stop() {
  if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGTERM');
}

function fail(message) {
  stop();
  process.stderr.write(`npm start: ${message}\n--- its output ---\n${output}`);
  process.exit(1);
}

const baseUrl = await new Promise((resolve) => {
  const timer = setTimeout(() => fail(`no start-up line within ${TIMEOUT_MS} ms`), TIMEOUT_MS);
  child.once('exit', (code) => fail(`exited with code ${code} before listening`));
  const look = () => {
    const match = START_LINE.exec(output);
    if (match) {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve(match[1]);
    }
  };
  child.stdout.on('data', look);
});

const response = await fetch(`${baseUrl}/admin/orgs`, { headers: { authorization: 'token ci-start-check' } }).catch(
  (error) => fail(`GET /admin/orgs failed: ${error.cause?.code ?? error.message}`),
);
const body = await response.text();
if (response.status !== 200) fail(`GET /admin/orgs answered ${response.status}: ${body}`);
const orgs = JSON.parse(body);
if (!Array.isArray(orgs) || orgs.length === 0 || typeof orgs[0].name !== 'string')
  fail(`GET /admin/orgs answered no organizations: ${body}`);
const exited = new Promise((resolve) => child.once('exit', resolve));
stop();
await exited;
const built = output.includes('build: ') ? ', dist/ built first' : '';
console.log(
  `npm start: ${baseUrl}/admin/orgs answered ${orgs.length} organizations, ${Math.round(performance.now() - started)} ms after start${built}`,
);
