// A write whose delivery goes to a `form` hook, with a title of 1 MiB of `!` (each byte of which
// the form writes as three), against the same write to a `json` hook, in alternating turns: the
// write's answer, and another client's read sent while it is applied. The form is encoded after the
// answer, in one pass: PASS when the form hook's writes take at most GOAL times the json hook's and
// no other client's read waits more than READ_GOAL_MS for them.
import { createServer } from 'node:http';
import { ratio, startMock } from './support.mjs';

const ROUNDS = 4;
const GOAL = 1.5;
const READ_GOAL_MS = 1000;
const LAUNCHER = new URL('../mock/dist/cli.mjs', import.meta.url).pathname;
const READ = '/repos/acme/rocket/keys/11001';

async function receiver() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

async function timed(request) {
  const started = performance.now();
  const answer = await request;
  await answer.arrayBuffer();
  if (answer.status >= 300) throw new Error(`answered ${answer.status}`);
  return performance.now() - started;
}

export async function benchWebhookForm() {
  const hook = await receiver();
  const mock = await startMock(
    {
      command: process.execPath,
      args: (port) => [LAUNCHER, 'sandbox', '--port', String(port), '--quiet'],
      base: (port) => `http://127.0.0.1:${port}/api/v1`,
    },
    READ,
  );
  const worst = { form: { write: 0, read: 0 }, json: { write: 0, read: 0 } };
  try {
    const call = (token, method, path, body) =>
      fetch(`${mock.base}${path}`, {
        method,
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    for (const kind of ['form', 'json'])
      await timed(
        call(`bench-${kind}`, 'PATCH', '/repos/acme/rocket/hooks/4001', {
          config: { url: hook.url, content_type: kind },
          events: ['pull_request'],
        }),
      );
    // A warm-up turn first, not counted.
    for (let round = -1; round < ROUNDS; round++) {
      for (const kind of ['form', 'json']) {
        // Another title each turn: the same one would send nothing.
        const title = (round % 2 === 0 ? '!' : '?').repeat(1024 * 1024);
        const write = timed(call(`bench-${kind}`, 'PATCH', '/repos/acme/rocket/pulls/43', { title }));
        const read = timed(call('bench-reader', 'GET', READ));
        const [writeMs, readMs] = await Promise.all([write, read]);
        if (round < 0) continue;
        worst[kind].write = Math.max(worst[kind].write, writeMs);
        worst[kind].read = Math.max(worst[kind].read, readMs);
      }
    }
  } finally {
    await mock.stop();
    await hook.close();
  }
  console.log(
    `\n## PATCH /repos/acme/rocket/pulls/43 with a title of 1 MiB of \`!\` or \`?\`, its delivery to a form or a json hook, and another client's GET ${READ} sent at once; the worst of ${ROUNDS} turns after a warm-up`,
  );
  for (const [kind, w] of Object.entries(worst))
    console.log(
      `${`${kind} hook`.padEnd(10)} write ${w.write.toFixed(0).padStart(5)} ms   read ${w.read.toFixed(0)} ms`,
    );
  const share = worst.form.write / worst.json.write;
  const pass = share <= GOAL && worst.form.read <= READ_GOAL_MS;
  console.log(
    `${pass ? 'PASS' : 'FAIL'}: form hook's write / json hook's ${ratio(worst.form.write, worst.json.write)} (goal <= ${GOAL.toFixed(2)}), another client's read ${worst.form.read.toFixed(0)} ms (goal <= ${READ_GOAL_MS})`,
  );
  return pass;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await benchWebhookForm()) ? 0 : 1;
