// `gitea-mock webhooks`: receives a real Gitea's webhook deliveries and checks each against the
// document's `webhooks:` (check.ts): a line per delivery (violations always, the rest unless
// --quiet), redacted of the secret and the hook's Authorization; a JSON report and JUnit XML when
// stopped. It answers `200` with `X-Contract-Violations`, or with --forward passes the delivery to
// the app's origin and answers with its answer; an app that refuses one fails the run, as Gitea
// counts only a 2xx as delivered. Bodies, JSON, connections and time are bounded as the front's.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { redact } from '../common/redaction.js';
import { NodeRequest } from 'srvx/node';
import { networkFailure } from '../common/network-failure.js';
import { Refusal } from '../common/refusal.js';
import { joinedTarget, originFormRefusal } from '../common/request-target.js';
import { describeViolation } from '../contract/conformance.js';
import { readDocumentFile } from '../contract/document-file.js';
import { createExchangeReport, type Found, total } from '../contract/exchange-report.js';
import { createSchemaValidator } from '../contract/schema.js';
import { kindOf } from '../contract/violation-kind.js';
import { createBodyBudget, defaultBodyBudget, readBodyBytes } from '../front/body.js';
import { answerAndClose, defaultMaxConnections, IDLE_TIMEOUT_MS, limitConnections } from '../front/connections.js';
import { reasonPhrase } from '../front/errors.js';
import { junitXml } from '../live/junit.js';
import type { Outcome, Problem } from '../live/results.js';
import { createDeliveryChecker, type DeliveryChecker } from './check.js';
import { parseReceiverOptions, RECEIVER_USAGE, type ReceiverOptions } from './receiver-options.js';
import { readBounded } from '../common/bytes.js';

/** Where the receiver writes its lines. */
export interface ReceiverOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Bytes of the app's answer passed back, as Gitea keeps them. */
const ANSWER_LIMIT = 1024 * 1024;
const FORWARD_TIMEOUT_MS = 30_000;
/** Deliveries whose results the JUnit XML lists; past that they are counted only. */
const OUTCOMES = 10_000;
/** Headers not passed on to the app: they belong to each connection. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length', 'upgrade']);
/**
 * Connections open at once: thrice the 10 workers of the queue Gitea sends deliveries from
 * (modules/setting/queue.go, `MaxWorkers`); the bodies share the front's budget besides.
 */
const MAX_CONNECTIONS = 32;
const TEXT = 'text/plain; charset=utf-8';

/** What the app behind --forward made of a delivery: its status, or why it could not be reached. */
type AppAnswer = { status: number } | { unreachable: string };

/** What the receiver has received so far, and what it needs to take more. */
interface Tally {
  options: ReceiverOptions;
  io: ReceiverOutput;
  check: DeliveryChecker;
  stats: ReturnType<typeof createExchangeReport>;
  bodies: ReturnType<typeof createBodyBudget>;
  /** The origin of the app behind --forward. */
  app: string | undefined;
  started: Date;
  outcomes: Outcome[];
  counts: { outside: number; refused: number; broken: number; checked: number; appRefused: number };
  /** What the app answered, by status (`unreachable` when it did not). */
  appStatuses: Record<string, number>;
  /** The secret: no line or file shows it, nor the Authorization a delivery carried (redacted with that delivery's lines). */
  always: readonly string[];
}

interface Receiver {
  /** `http://host:port`. */
  origin: string;
  /** The webhooks of the contract it checks against, by event type. */
  webhooks: readonly string[];
  /** Stops listening and writes the files asked for; resolves with the exit code. */
  stop(): Promise<number>;
}

/**
 * The `gitea-mock webhooks` command: runs the receiver until SIGINT or SIGTERM; resolves with the
 * exit code (2 for a usage error or a port that cannot be had).
 */
export async function receiveWebhooks(args: string[], env: NodeJS.ProcessEnv, io: ReceiverOutput): Promise<number> {
  let options: ReceiverOptions | undefined;
  try {
    options = parseReceiverOptions(args, env);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    io.stderr(`gitea-mock webhooks: ${error.message}\n\n${RECEIVER_USAGE}`);
    return error.status;
  }
  if (!options) {
    io.stdout(RECEIVER_USAGE);
    return 0;
  }
  let receiver: Receiver;
  try {
    receiver = await startReceiver(options, io);
  } catch (error) {
    io.stderr(`gitea-mock webhooks: cannot start: ${(error as Error).message}\n`);
    return 2;
  }
  const stopped = new Promise<number>((resolve) => {
    const stop = (): void =>
      void receiver.stop().then(resolve, (error: unknown) => {
        io.stderr(`gitea-mock webhooks: the results were not written: ${(error as Error).message}\n`);
        resolve(2);
      });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  io.stdout(
    `gitea-mock: receiving webhook deliveries on ${receiver.origin}/, checked against the contract's ${receiver.webhooks.length} webhooks; Ctrl-C stops\n`,
  );
  return stopped;
}

async function startReceiver(options: ReceiverOptions, io: ReceiverOutput): Promise<Receiver> {
  const doc = readDocumentFile().document;
  const tally: Tally = {
    options,
    io,
    check: createDeliveryChecker(doc, createSchemaValidator(doc)),
    stats: createExchangeReport(),
    // The bytes of deliveries read or being handled at once, as the mock's front bounds its bodies.
    bodies: createBodyBudget(defaultBodyBudget(getHeapStatistics().heap_size_limit)),
    app: options.forward?.origin,
    started: new Date(),
    outcomes: [],
    counts: { outside: 0, refused: 0, broken: 0, checked: 0, appRefused: 0 },
    appStatuses: {},
    always: options.secret ? [options.secret] : [],
  };
  const server = await listen(options, (req, res) =>
    handle(tally, req, res).catch((error: unknown) => {
      say(tally, `gitea-mock: receiver failure: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }),
  );
  const { address, port } = server.address() as AddressInfo;
  const origin = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  return {
    origin,
    webhooks: tally.check.names,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return conclude(tally, origin);
    },
  };
}

/**
 * Listens with the front's bounds: a connection that sends no request head within
 * IDLE_TIMEOUT_MS, or stays idle as long between deliveries, is closed; a delivery must arrive
 * whole within 30 s; at most MAX_CONNECTIONS at once, the others answered 503.
 */
async function listen(
  options: ReceiverOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<Server> {
  const server = createServer(
    {
      requestTimeout: 30_000,
      headersTimeout: IDLE_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => void (connections.refused(req.socket) || handler(req, res)),
  );
  const connections = limitConnections(server, Math.min(MAX_CONNECTIONS, defaultMaxConnections()), () => {
    const message = 'too many deliveries are being received at once; try again shortly\n';
    const head = `HTTP/1.1 503 ${reasonPhrase(503)}\r\nRetry-After: 1\r\nContent-Type: ${TEXT}`;
    return `${head}\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`;
  });
  // Requests Node's parser refuses never reach the handler; neither do those of a refused socket.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (connections.refused(socket) || error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    answerAndClose(
      socket,
      `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}

const say = (tally: Tally, line: string, secrets = tally.always): void => tally.io.stdout(`${redact(line, secrets)}\n`);
const record = (tally: Tally, outcome: Outcome): void =>
  void (tally.outcomes.length < OUTCOMES && tally.outcomes.push(outcome));

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    for (const each of [value ?? []].flat()) headers.append(name, each);
  return headers;
}

/** Refuses a request the receiver does not check, in plain text, and says so; the connection closes, what is left of the request unread. */
function refuse(tally: Tally, req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  tally.counts.refused++;
  const path = (req.url?.split('?')[0] ?? '/').slice(0, 200);
  say(tally, `gitea-mock: a delivery to ${path} was refused (${status}): ${message}`);
  const cause = `refused (${status}): ${message}`;
  record(tally, {
    operationId: `delivery to ${path}`,
    checked: false,
    kind: status === 400 ? 'outside' : 'too-large',
    cause,
  });
  const text = `${message}\n`;
  res.writeHead(status, {
    'Content-Type': TEXT,
    'Content-Length': String(Buffer.byteLength(text)),
    Connection: 'close',
  });
  res.end(text);
}

async function handle(tally: Tally, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { options, app } = tally;
  if (req.method !== 'POST' && req.method !== 'GET') {
    req.resume();
    res.writeHead(405, { Allow: 'POST, GET', 'Content-Type': TEXT });
    return void res.end('webhook deliveries are POST (or GET) requests\n');
  }
  const forwardTo = app === undefined ? undefined : { server: 'receiver', host: options.forward!.host };
  const badTarget = originFormRefusal(req.url, '/hook', forwardTo);
  if (badTarget !== undefined) {
    req.resume();
    return refuse(tally, req, res, 400, badTarget);
  }
  let body: Buffer = Buffer.alloc(0);
  // The delivery's bytes count against the receiver's budget until it has been handled.
  const reading = tally.bodies.reading();
  res.once('close', reading.release);
  if (req.method === 'GET') req.resume();
  else {
    const read = await readBodyBytes(new NodeRequest({ req, res }), reading);
    if (!read.ok) return refuse(tally, req, res, read.status, read.message);
    body = Buffer.from(read.data.buffer, read.data.byteOffset, read.data.byteLength);
  }
  const headers = headersOf(req);
  const authorization = headers.get('authorization');
  const secrets = authorization ? [...tally.always, authorization, ...authorization.split(' ').slice(1)] : tally.always;
  const delivered = { method: req.method, url: req.url ?? '/', headers, body: body.toString('utf8') };
  const result = tally.check.check(delivered, options.secret);
  if ('refused' in result) return refuse(tally, req, res, result.refused.status, result.refused.message);
  const found: Found[] =
    'outside' in result
      ? []
      : result.violations.map((violation) => ({ line: describeViolation(violation), count: violation.count ?? 1 }));
  const count = total(found);
  let answer: AppAnswer = { status: 200 };
  if (options.forward) answer = await forward(tally, req, body, res, count);
  else {
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Contract-Violations': String(count) });
    res.end('{}\n');
  }
  tallyDelivery(tally, headers.get('x-gitea-delivery') ?? '(no X-Gitea-Delivery)', result, found, answer, secrets);
}

/** Counts a delivery of the contract (`webhook`), or one outside it, and what the app made of it; says so in its line. */
function tallyDelivery(
  tally: Tally,
  delivery: string,
  result: { outside: string } | { webhook: string; action: string },
  found: Found[],
  answer: AppAnswer,
  secrets: readonly string[],
): void {
  const { app, counts, options } = tally;
  const status = 'status' in answer ? answer.status : undefined;
  // Gitea counts only a 2xx as delivered (services/webhook/deliver.go, `Deliver`).
  const appFailed = app !== undefined && !(status !== undefined && status >= 200 && status < 300);
  let appLine: string | undefined;
  if (app !== undefined) {
    appLine =
      'status' in answer
        ? `the app at ${app} answered ${answer.status}`
        : `the app at ${app} could not be reached: ${answer.unreachable}`;
    const key = String(status ?? 'unreachable');
    tally.appStatuses[key] = (tally.appStatuses[key] ?? 0) + 1;
    if (appFailed) counts.appRefused++;
  }
  const appProblems: Problem[] = appFailed ? [{ kind: 'app', line: appLine! }] : [];
  const suffix = appLine === undefined ? '' : `; ${appLine}`;
  if ('outside' in result) {
    counts.outside++;
    if (!options.quiet || appFailed)
      say(tally, `gitea-mock: webhook ${delivery}: not checked: ${result.outside}${suffix}`, secrets);
    const operationId = redact(`delivery ${delivery}`, secrets);
    const cause = redact(result.outside, secrets);
    record(
      tally,
      appFailed
        ? { operationId, checked: true, status, problems: appProblems, ms: 0, notChecked: `not checked: ${cause}` }
        : { operationId, checked: false, kind: 'outside', cause },
    );
    return;
  }
  counts.checked++;
  tally.stats.record(result.webhook, found, secrets);
  const label = `webhook ${result.webhook} ${result.action} ${delivery}`;
  const count = total(found);
  if (count > 0) {
    counts.broken++;
    const lines = found.map(({ line }) => line).join('; ');
    say(tally, `gitea-mock: contract: ${label}: ${count} violation${count > 1 ? 's' : ''}: ${lines}${suffix}`, secrets);
  } else if (!options.quiet || appFailed) say(tally, `gitea-mock: ${label}: conforms${suffix}`, secrets);
  const problems = found.map(({ line, count: stands }) => ({
    kind: kindOf(line),
    line: redact(line, secrets),
    count: stands,
  }));
  record(tally, {
    operationId: redact(`${result.webhook} ${result.action} ${delivery}`, secrets),
    checked: true,
    status,
    problems: [...problems, ...appProblems],
    ms: 0,
  });
}

/** Passes the delivery on to the app's origin (the target, a path, joined below the app's path) and its answer back. */
async function forward(
  tally: Tally,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
  count: number,
): Promise<AppAnswer> {
  const headers = new Headers();
  for (const [name, value] of headersOf(req)) if (!HOP_BY_HOP.has(name)) headers.set(name, value);
  const violations = { 'X-Contract-Violations': String(count) };
  const target = joinedTarget(tally.options.forward!, req.url ?? '/');
  try {
    const answer = await fetch(target, {
      method: req.method ?? 'POST',
      headers,
      ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: new Uint8Array(body) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const bytes = (await readBounded(answer.body, ANSWER_LIMIT)).bytes.subarray(0, ANSWER_LIMIT);
    const type = answer.headers.get('content-type');
    res.writeHead(answer.status, {
      ...(type ? { 'Content-Type': type } : {}),
      'Content-Length': String(bytes.length),
      ...violations,
    });
    res.end(bytes);
    return { status: answer.status };
  } catch (error) {
    const cause =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : (networkFailure(error as NodeJS.ErrnoException).code ?? (error as Error).message);
    res.writeHead(502, { 'Content-Type': TEXT, ...violations });
    res.end(`the app at ${tally.app} could not be reached: ${cause}\n`);
    return { unreachable: cause };
  }
}

/** Once stopped: the files asked for, the lines on stderr, and the exit code. */
function conclude(tally: Tally, origin: string): number {
  const { options, app, counts, started, always } = tally;
  const { checked, outside, refused, broken, appRefused } = counts;
  const exitCode = checked === 0 ? 2 : broken > 0 || appRefused > 0 ? 1 : 0;
  const notChecked = [
    ...(outside > 0 ? [`${outside} outside it`] : []),
    ...(refused > 0 ? [`${refused} refused`] : []),
  ];
  const stopped =
    checked === 0
      ? `no delivery of the contract was received${notChecked.length > 0 ? ` (${notChecked.join(', ')})` : ''}`
      : undefined;
  const finished = new Date();
  const forwarded = Object.values(tally.appStatuses).reduce((sum, each) => sum + each, 0);
  if (options.report) {
    const report = {
      receiver: origin,
      started: started.toISOString(),
      finished: finished.toISOString(),
      webhooks: tally.stats.byName(),
      notInContract: { deliveries: outside },
      refused: { deliveries: refused },
      ...(app === undefined
        ? {}
        : { forwarded: { app, deliveries: forwarded, refused: appRefused, statuses: tally.appStatuses } }),
    };
    writeFileSync(options.report, `${redact(JSON.stringify(report, null, 2), always)}\n`);
  }
  if (options.junit) {
    const server = `${checked + outside + refused} deliveries received, ${checked} of the contract`;
    const run = { baseUrl: origin, server, started, finished, exitCode, stopped, outcomes: tally.outcomes };
    writeFileSync(options.junit, junitXml(run, always, 'gitea-mock webhooks'));
  }
  const { io } = tally;
  if (stopped) io.stderr(`gitea-mock: ${stopped}: exit code 2\n`);
  if (!stopped && broken > 0)
    io.stderr(`gitea-mock: ${broken} of ${checked} deliveries broke the contract: exit code 1\n`);
  if (!stopped && appRefused > 0)
    io.stderr(
      `gitea-mock: ${appRefused} of ${forwarded} deliveries ${appRefused === 1 ? 'was' : 'were'} refused by the app at ${app}: exit code 1\n`,
    );
  return exitCode;
}
