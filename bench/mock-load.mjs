// Load check: 20,000 requests at concurrency 100, a fifth of them hostile, against gitea-mock
// with the examples and as the sandbox. Every request must get an answer (no dropped
// connection) and none may be a 5xx; resident memory is read before and after. The baseline is
// the same count of well-formed requests. Requests come with 300 different credentials, so the
// sandbox keeps its cap of 100 worlds by dropping the least recently used. The hostile share
// includes GPG keys of 1.5 MiB (past the sandbox's bound on a stored text, so 413 there) and
// resets from fresh credentials (which must not make worlds): memory after the run shows both.
// Then the everyday load of a team's test suites: 6,000 well-formed requests at concurrency 200
// from the same 300 credentials, a fifth of them short markdown renders, the rest hook edits,
// secrets and reads; every one must be answered, none with a 5xx.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { ratio, rssMiB, startMock } from './support.mjs';

const TOTAL = Number(process.env.BENCH_LOAD_REQUESTS ?? 20_000);
const CONCURRENCY = 100;
const TOKEN = 'token 0123456789abcdef';
const CREDENTIALS = 300;

const MIX_TOTAL = Number(process.env.BENCH_MIX_REQUESTS ?? 6_000);
const MIX_CONCURRENCY = 200;

const valid = [
  { method: 'GET', path: '/repos/acme/rocket/keys/11001' },
  { method: 'GET', path: '/admin/orgs?limit=2&page=2' },
  { method: 'PATCH', path: '/repos/acme/rocket/hooks/4001', body: '{"active":true,"events":["push"]}' },
  { method: 'POST', path: '/markdown', body: '{"Text":"# hi","Mode":"markdown"}' },
  { method: 'PATCH', path: '/notifications/threads/10001?to-status=read' },
];

/** A team's suites at work: a fifth short renders, then hook edits, secrets and reads. */
const everyday = [
  {
    method: 'POST',
    path: '/markdown',
    body: '{"Text":"Fixes #42, thanks @alice","Mode":"comment","Context":"/acme/rocket"}',
  },
  { method: 'PATCH', path: '/repos/acme/rocket/hooks/4001', body: '{"active":true,"events":["push","release"]}' },
  { method: 'PUT', path: '/user/actions/secrets/DEPLOY_KEY', body: '{"data":"s3cr3t-value"}' },
  { method: 'GET', path: '/repos/acme/rocket/keys/11001' },
  { method: 'GET', path: '/teams/12001/members' },
];

const BIG = 11 * 1024 * 1024;
const hostile = [
  { kind: 'malformed JSON', method: 'PATCH', path: '/repos/acme/rocket/hooks/4001', body: '{"active": tru' },
  {
    kind: 'invalid UTF-8',
    method: 'PATCH',
    path: '/repos/acme/rocket/hooks/4001',
    body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  },
  {
    kind: 'schema violation',
    method: 'PUT',
    path: '/repos/acme/rocket/collaborators/bob',
    body: '{"permission":"owner"}',
  },
  { kind: 'bad credentials', method: 'GET', path: '/admin/orgs', auth: 'Basic !!!' },
  { kind: 'unknown Prefer code', method: 'GET', path: '/admin/orgs', prefer: 'code=599' },
  {
    kind: 'body over 10 MB (declared)',
    raw: `PATCH /api/v1/repos/acme/rocket/hooks/4001 HTTP/1.1\r\nHost: x\r\nAuthorization: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${BIG}\r\n\r\n{`,
  },
  {
    kind: 'CR/LF in a header',
    raw: `GET /api/v1/admin/orgs HTTP/1.1\r\nHost: x\r\nAuthorization: ${TOKEN}\rX-Evil: 1\r\n\r\n`,
  },
  {
    kind: 'path traversal',
    raw: `GET /api/v1/../../../../etc/passwd HTTP/1.1\r\nHost: x\r\nAuthorization: ${TOKEN}\r\nConnection: close\r\n\r\n`,
  },
  // A distinct 1.5 MiB key each time: stored, it would grow the world past its bounds.
  {
    kind: 'large body, stored',
    method: 'POST',
    path: '/user/gpg_keys',
    body: (n) =>
      JSON.stringify({
        armored_public_key: `-----BEGIN PGP PUBLIC KEY BLOCK-----\n${String(n).padStart(8, '0')}${'A'.repeat(1.5 * 1024 * 1024)}\n-----END PGP PUBLIC KEY BLOCK-----`,
      }),
  },
  // A fresh credential each time, outside /api/v1: a reset must not make a world of its own.
  { kind: 'reset', method: 'POST', path: '/__sandbox/reset', outsideApi: true, auth: (n) => `token reset-${n}` },
  {
    kind: 'oversized headers',
    raw: `GET /api/v1/admin/orgs HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`,
  },
];

/**
 * One request through the keep-alive agent; its status, or 'dropped' with the error's code. A
 * request on a kept-alive socket that the server closed as idle just as it was sent meets
 * ECONNRESET (or, while its body is still being written, EPIPE) before the server read any of it:
 * as Node's documentation advises, and as fetch does, it is sent once more on a new socket. Node
 * 20's agent keeps an idle socket exactly as long as the server's Keep-Alive hint, so both let go
 * of it at once; a reset anywhere else counts as dropped.
 */
function viaAgent(agent, base, spec, retried = false) {
  return new Promise((resolve) => {
    const text = typeof spec.body === 'function' ? spec.body(spec.n) : spec.body;
    const body = text === undefined ? undefined : Buffer.isBuffer(text) ? text : Buffer.from(text);
    const auth = typeof spec.auth === 'function' ? spec.auth(spec.n) : spec.auth;
    const headers = {
      authorization: auth ?? `${TOKEN}-${spec.n % CREDENTIALS}`,
      ...(spec.prefer ? { prefer: spec.prefer } : {}),
    };
    const url = spec.outsideApi ? `${new URL(base).origin}${spec.path}` : `${base}${spec.path}`;
    if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(body.length) });
    let answered = false;
    const req = request(url, { method: spec.method, headers, agent }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', (error) => resolve(`dropped (${error.code ?? error.message})`));
    });
    req.on('error', (error) => {
      const idleReset =
        !answered && !retried && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      resolve(idleReset ? viaAgent(agent, base, spec, true) : `dropped (${error.code ?? error.message})`);
    });
    req.end(body);
  });
}

function viaRawSocket(base, text) {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setTimeout(15_000, () => socket.destroy(new Error('timeout')));
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      resolve(status ? Number(status) : 'dropped');
    });
    socket.write(text);
  });
}

async function drive(base, hostileShare, { total = TOTAL, concurrency = CONCURRENCY, specs = valid } = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const counts = new Map();
  const hostileCounts = new Map();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const isHostile = hostileShare > 0 && i % Math.round(1 / hostileShare) === 0;
      const spec = isHostile ? hostile[((i / 5) % hostile.length) | 0] : specs[i % specs.length];
      const status = spec.raw ? await viaRawSocket(base, spec.raw) : await viaAgent(agent, base, { ...spec, n: i });
      // Any drop counts as one, whatever its code; the hostile lines show the code.
      const key = typeof status === 'number' ? `${String(status)[0]}xx` : 'dropped';
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (isHostile)
        hostileCounts.set(`${spec.kind} -> ${status}`, (hostileCounts.get(`${spec.kind} -> ${status}`) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return { seconds: (performance.now() - started) / 1000, counts, hostileCounts };
}

export async function benchLoad(name = 'gitea-mock') {
  const mock = await startMock(name, '/repos/acme/rocket/keys/11001');
  const baseline = await drive(mock.base, 0);
  const rssBefore = await rssMiB(mock.pid);
  const mixed = await drive(mock.base, 0.2);
  const rssAfter = await rssMiB(mock.pid);
  const mix = await drive(mock.base, 0, { total: MIX_TOTAL, concurrency: MIX_CONCURRENCY, specs: everyday });
  await mock.stop();

  const show = (counts) =>
    [...counts]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  console.log(
    `\n## Load check of ${name}: ${TOTAL} requests, concurrency ${CONCURRENCY}, one in five hostile, ${CREDENTIALS} credentials`,
  );
  console.log(
    `well-formed only   ${(TOTAL / baseline.seconds).toFixed(0).padStart(6)} req/s   ${show(baseline.counts)}`,
  );
  console.log(`with hostile       ${(TOTAL / mixed.seconds).toFixed(0).padStart(6)} req/s   ${show(mixed.counts)}`);
  for (const [kind, count] of [...mixed.hostileCounts].sort()) console.log(`  ${kind}: ${count}`);
  console.log(
    `resident memory    ${rssBefore.toFixed(1)} MiB before, ${rssAfter.toFixed(1)} MiB after (growth ${(rssAfter - rssBefore).toFixed(1)} MiB)`,
  );
  console.log(`ratio hostile-mix / well-formed throughput: ${ratio(TOTAL / mixed.seconds, TOTAL / baseline.seconds)}`);
  console.log(
    `everyday mix       ${(MIX_TOTAL / mix.seconds).toFixed(0).padStart(6)} req/s   ${show(mix.counts)}   (${MIX_TOTAL} requests, concurrency ${MIX_CONCURRENCY}, a fifth short renders)`,
  );
  const failures = [baseline, mixed, mix].reduce(
    (sum, { counts }) => sum + (counts.get('5xx') ?? 0) + (counts.get('dropped') ?? 0),
    0,
  );
  console.log(
    failures === 0
      ? 'load check: PASS (no 5xx, no dropped connection)'
      : `load check: FAIL (${failures} 5xx or dropped)`,
  );
  return failures === 0;
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exitCode = (await benchLoad()) && (await benchLoad('gitea-mock sandbox')) ? 0 : 1;
