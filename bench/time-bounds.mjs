// How soon the mock answers what it holds, refuses or ends: the upper time bounds the suites used
// to assert, measured here, where speed belongs (a loaded machine slows them; the suites keep what
// is behaviour: the statuses, the messages, /version answering during a render, the lower bound of
// a requested delay). Each is a ratio against a baseline of the same run, or the bound the mock was
// asked to keep, with the suite's old bound as the goal:
// - a render refused at its output bound (2 MiB here) while another client asks /version every
//   20 ms: the worst /version wait / the render's time, at most 1/3 (or 250 ms, whichever is more);
// - a text past 1 MiB refused: at most 1000 ms (and its share of that render);
// - a render ended at its 1000 ms time bound: answered within 2.5 times the bound;
// - Prefer: delay=400: answered within 1.5 times the delay and an unheld request's time;
// - a silent connection and an idle kept-alive one: closed within 1.6 times the 5 s idle bound;
// - `gitea-mock verify` against a server silent after /version, with --timeout 2: done within 3
//   times the run's 2 s, past the start-up of a run that stops at once (its baseline);
// - `gitea-mock verify --connect-timeout 0.5` against a server that never answers: stopped past
//   that start-up within 0.8 of the 10 s default it must not wait for.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import { startMockServer } from '../mock/dist/server.mjs';
import { freePort } from '../scripts/free-port.mjs';
import { AUTH, verdict } from './support.mjs';

const LAUNCHER = new URL('../mock/dist/cli.mjs', import.meta.url).pathname;
const KEY = '/repos/acme/rocket/keys/11001';
const IDLE_MS = 5_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

const mentions = (bytes) => '@alice #42 '.repeat(Math.floor(bytes / 11));

async function timed(url, init = {}) {
  const started = performance.now();
  const answer = await fetch(url, { ...init, headers: { ...AUTH, ...init.headers } });
  const text = await answer.text();
  return { status: answer.status, text, ms: performance.now() - started };
}

const post = (url, body) =>
  timed(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function markdown() {
  const results = [];
  // The output bound answers; the time bound is out of reach.
  let mock = await startMockServer({
    port: 0,
    sandbox: { markdown: { timeoutMs: 60_000, maxOutputBytes: 2 * 1024 * 1024 } },
  });
  try {
    const render = post(`${mock.baseUrl}/markdown`, {
      Text: mentions(256 * 1024),
      Mode: 'comment',
      Context: '/acme/rocket',
    });
    let done = false;
    void render.finally(() => (done = true));
    const waits = [];
    while (!done) {
      const version = await timed(`${mock.baseUrl}/version`);
      if (version.status !== 200) throw new Error(`/version answered ${version.status}`);
      waits.push(version.ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const refused = await render;
    if (refused.status !== 413) throw new Error(`the render answered ${refused.status}`);
    const worst = Math.max(...waits);
    console.log(
      `\n## POST /markdown of 256 KiB of mentions, refused at the 2 MiB output bound, while GET /version is asked every 20 ms`,
    );
    console.log(
      `render ${refused.ms.toFixed(0)} ms, ${waits.length} /version answers, the worst after ${worst.toFixed(1)} ms`,
    );
    results.push(
      verdict(
        'worst /version wait / render',
        worst / refused.ms,
        'at most',
        Math.max(250, refused.ms / 3) / refused.ms,
      ),
    );

    const text = mentions(1024 * 1024 + 11);
    const large = await post(`${mock.baseUrl}/markdown`, { Text: text });
    if (large.status !== 413) throw new Error(`the text past 1 MiB answered ${large.status}`);
    console.log(
      `\n## POST /markdown of ${text.length} bytes, refused at the 1 MiB input bound\nrefused after ${large.ms.toFixed(0)} ms, ${(large.ms / refused.ms).toFixed(3)} of the render above`,
    );
    results.push(verdict('refusal, in seconds', large.ms / 1000, 'at most', 1));
  } finally {
    await mock.close();
  }

  mock = await startMockServer({ port: 0, sandbox: { markdown: { timeoutMs: 1_000 } } });
  try {
    // About 3 s to render: ended after 1, the worker's start included.
    const slow = await post(`${mock.baseUrl}/markdown`, { Text: `|a|b|\n|-|-|\n${'|x|y|\n'.repeat(174_000)}` });
    if (slow.status !== 413) throw new Error(`the slow render answered ${slow.status}`);
    console.log(
      `\n## POST /markdown of 1 MiB of table, past the 1000 ms time bound\nanswered after ${slow.ms.toFixed(0)} ms`,
    );
    results.push(verdict('answer / the time bound', slow.ms / 1000, 'at most', 2.5));
  } finally {
    await mock.close();
  }
  return results.every(Boolean);
}

async function delay() {
  const mock = await startMockServer({ port: 0 });
  try {
    const url = `${mock.baseUrl}${KEY}`;
    await timed(url);
    const quick = await timed(url);
    const held = await timed(url, { headers: { prefer: 'delay=400' } });
    if (held.status !== 200) throw new Error(`the held request answered ${held.status}`);
    console.log(
      `\n## GET ${KEY} with Prefer: delay=400\nanswered after ${held.ms.toFixed(0)} ms (unheld: ${quick.ms.toFixed(1)} ms)`,
    );
    return verdict('held / (delay + unheld)', held.ms / (400 + quick.ms), 'at most', 1.5);
  } finally {
    await mock.close();
  }
}

/** Milliseconds until the mock closes a connection that sent `bytes`. */
function closedAfter(origin, bytes) {
  const { hostname, port } = new URL(origin);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => resolve(performance.now() - started));
  });
}

async function idle() {
  const mock = await startMockServer({ port: 0 });
  try {
    const [silent, keptAlive] = await Promise.all([
      closedAfter(mock.origin, ''),
      closedAfter(mock.origin, 'GET /api/v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    ]);
    console.log(
      `\n## A connection that sends nothing, and a kept-alive one idle after an answer\nclosed after ${silent.toFixed(0)} ms and ${keptAlive.toFixed(0)} ms (the idle bound: ${IDLE_MS} ms)`,
    );
    return verdict('later close / the idle bound', Math.max(silent, keptAlive) / IDLE_MS, 'at most', 1.6);
  } finally {
    await mock.close();
  }
}

/** `gitea-mock verify` with `args`: the milliseconds it ran and its exit code. */
function verify(args) {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [LAUNCHER, 'verify', '--repo', 'acme/rocket', ...args],
      { env: { ...process.env, GITEA_TOKEN: 'bench-token' } },
      (error) => resolve({ code: error ? error.code : 0, ms: performance.now() - started }),
    );
  });
}

async function listening(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}/api/v1`;
}

async function live() {
  // The baseline: a run that stops at its first request, refused (nothing listens there).
  const startup = await verify(['--base-url', `http://127.0.0.1:${await freePort()}/api/v1`]);
  const silent = createServer((req, res) => {
    req.resume();
    if (req.url === '/api/v1/version')
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"1.27.1"}');
  });
  const dumb = createTcpServer(() => {});
  try {
    const run = await verify(['--base-url', await listening(silent), '--timeout', '2', '--request-timeout', '0.4']);
    const stopped = await verify(['--base-url', await listening(dumb), '--connect-timeout', '0.5']);
    for (const [what, { code }] of Object.entries({ startup, run, stopped }))
      if (code !== 2) throw new Error(`verify (${what}) exited ${code}`);
    console.log(
      `\n## gitea-mock verify: a run that stops at once, one against a server silent after /version (--timeout 2, --request-timeout 0.4), one against a server that never answers (--connect-timeout 0.5)`,
    );
    console.log(
      `stops at once ${startup.ms.toFixed(0)} ms, silent ${run.ms.toFixed(0)} ms, never answers ${stopped.ms.toFixed(0)} ms`,
    );
    return [
      verdict('silent run past start-up / --timeout', (run.ms - startup.ms) / 2000, 'at most', 3),
      verdict(
        'stop past start-up / the 10 s default',
        (stopped.ms - startup.ms) / DEFAULT_CONNECT_TIMEOUT_MS,
        'at most',
        0.8,
      ),
    ].every(Boolean);
  } finally {
    silent.closeAllConnections();
    silent.close();
    dumb.close();
  }
}

export async function benchTimeBounds() {
  const results = [await markdown(), await delay(), await idle(), await live()];
  return results.every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchTimeBounds()) ? 0 : 1;
