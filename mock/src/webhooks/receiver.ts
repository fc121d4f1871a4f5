// `gitea-mock webhooks`: a receiver for a real Gitea's webhook deliveries that checks each one
// against the document's `webhooks:` section (check.ts) and says so as the proxy says it: a line
// per delivery (the violations always, the rest unless --quiet), each redacted of the secret and of
// the hook's Authorization header, the proxy's JSON report and live mode's JUnit XML when stopped.
// It answers every delivery `200` (with `X-Contract-Violations`), or, with --forward, passes it on
// to the user's app unchanged (to the app's origin only) and answers with the app's answer, which
// its lines and files record: an app that refuses a delivery fails the run, as Gitea counts only a
// 2xx as delivered. What a peer sends is bounded as the mock's front bounds it: the body's bytes,
// the payload's JSON values and depth, the connections and how long each may take.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { NodeRequest } from 'srvx/node';
import { redact } from 'gitea-contract/internal';
import { describeViolation } from '../contract/conformance.js';
import { readDocumentFile } from '../contract/document-file.js';
import { createExchangeReport, total, type Found } from '../contract/exchange-report.js';
import { createSchemaValidator } from '../contract/schema.js';
import { kindOf } from '../contract/violation-kind.js';
import { junitXml } from '../live/junit.js';
import type { Outcome, RunRecord } from '../live/results.js';
import { createBodyBudget, defaultBodyBudget, readBodyBytes } from '../front/body.js';
import { answerAndClose, defaultMaxConnections, IDLE_TIMEOUT_MS, limitConnections } from '../front/connections.js';
import { reasonPhrase } from '../front/errors.js';
import { networkFailure } from '../common/network-failure.js';
import { Refusal } from '../common/refusal.js';
import { joinedTarget, originFormRefusal } from '../common/request-target.js';
import { createDeliveryChecker } from './check.js';
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
 * Connections open at once. Gitea sends deliveries from a queue of at most 10 workers by default
 * (modules/setting/queue.go, `MaxWorkers`), so this is thrice what one server opens; the bodies
 * being read or handled share the front's budget besides (front/body.ts).
 */
const MAX_CONNECTIONS = 32;

/** What the app behind --forward made of a delivery: its status, or why it could not be reached. */
type AppAnswer = { status: number } | { unreachable: string };

/** Whether Gitea counts the app's answer as delivered: a 2xx only (services/webhook/deliver.go, `Deliver`). */
const delivered = (answer: AppAnswer): boolean => 'status' in answer && answer.status >= 200 && answer.status < 300;

interface Receiver {
  /** `http://host:port`. */
  origin: string;
  /** The webhooks of the contract it checks against, by event type. */
  webhooks: readonly string[];
  /** Stops listening and writes the files asked for; resolves with the exit code. */
  stop(): Promise<number>;
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    for (const each of [value ?? []].flat()) headers.append(name, each);
  return headers;
}

/** An answer's body, read up to ANSWER_LIMIT bytes. */
async function limitedBody(answer: Response): Promise<Buffer> {
  return Buffer.from((await readBounded(answer.body, ANSWER_LIMIT - 1)).bytes.subarray(0, ANSWER_LIMIT));
}

/** A refusal in plain text; the connection closes after it, since what is left of the request stays unread. */
function refuse(res: ServerResponse, status: number, message: string): void {
  const text = `${message}\n`;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    Connection: 'close',
  });
  res.end(text);
}

async function startReceiver(options: ReceiverOptions, io: ReceiverOutput): Promise<Receiver> {
  const doc = readDocumentFile().document;
  const checker = createDeliveryChecker(doc, createSchemaValidator(doc));
  const stats = createExchangeReport();
  const outcomes: Outcome[] = [];
  const started = new Date();
  let outside = 0;
  let refused = 0;
  let broken = 0;
  let checked = 0;
  const app = options.forward?.origin;
  /** What the app answered, by status (`unreachable` when it did not), and how many it refused. */
  const appStatuses: Record<string, number> = {};
  let appRefused = 0;
  /** The secret: no line or file shows it, nor the Authorization a delivery carried (redacted with that delivery's lines). */
  const always = options.secret ? [options.secret] : [];
  const say = (line: string, secrets: readonly string[] = always): void => io.stdout(`${redact(line, secrets)}\n`);
  const record = (outcome: Outcome): void => void (outcomes.length < OUTCOMES && outcomes.push(outcome));
  // The bytes of deliveries read or being handled at once, as the mock's front bounds its bodies.
  const bodies = createBodyBudget(defaultBodyBudget(getHeapStatistics().heap_size_limit));

  /** Refuses a request the receiver does not check, and says so. */
  function refuseDelivery(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
    refused++;
    const path = req.url?.split('?')[0] ?? '/';
    say(`gitea-mock: a delivery to ${path.slice(0, 200)} was refused (${status}): ${message}`);
    record({
      operationId: `delivery to ${path.slice(0, 200)}`,
      checked: false,
      kind: status === 400 ? 'outside' : 'too-large',
      cause: `refused (${status}): ${message}`,
    });
    refuse(res, status, message);
  }

  /** Passes the delivery on to the app and its answer back; resolves with what the app made of it. */
  async function forward(req: IncomingMessage, body: Buffer, res: ServerResponse, count: number): Promise<AppAnswer> {
    // The app's origin only: the request target is a path (refused before), joined below the app's path.
    const target = joinedTarget(options.forward!, req.url ?? '/');
    const headers = new Headers();
    for (const [name, value] of headersOf(req)) if (!HOP_BY_HOP.has(name)) headers.set(name, value);
    try {
      const answer = await fetch(target, {
        method: req.method ?? 'POST',
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: new Uint8Array(body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      const bytes = await limitedBody(answer);
      const type = answer.headers.get('content-type');
      res.writeHead(answer.status, {
        ...(type ? { 'Content-Type': type } : {}),
        'Content-Length': String(bytes.length),
        'X-Contract-Violations': String(count),
      });
      res.end(bytes);
      return { status: answer.status };
    } catch (error) {
      const cause =
        (error as Error).name === 'TimeoutError'
          ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
          : (networkFailure(error as NodeJS.ErrnoException).code ?? (error as Error).message);
      res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Contract-Violations': String(count) });
      res.end(`the app at ${app} could not be reached: ${cause}\n`);
      return { unreachable: cause };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' && req.method !== 'GET') {
      req.resume();
      res.writeHead(405, { Allow: 'POST, GET', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('webhook deliveries are POST (or GET) requests\n');
      return;
    }
    const badTarget = originFormRefusal(
      req.url,
      '/hook',
      app === undefined ? undefined : { server: 'receiver', host: options.forward!.host },
    );
    if (badTarget !== undefined) {
      req.resume();
      return refuseDelivery(req, res, 400, badTarget);
    }
    let body: Buffer = Buffer.alloc(0);
    // The delivery's bytes count against the receiver's budget until it has been handled.
    const reading = bodies.reading();
    res.once('close', reading.release);
    if (req.method === 'GET') req.resume();
    else {
      const read = await readBodyBytes(new NodeRequest({ req, res }), reading);
      if (!read.ok) return refuseDelivery(req, res, read.status, read.message);
      body = Buffer.from(read.data.buffer, read.data.byteOffset, read.data.byteLength);
    }
    const headers = headersOf(req);
    const authorization = headers.get('authorization');
    const secrets = authorization ? [...always, authorization, ...authorization.split(' ').slice(1)] : always;
    const result = checker.check(
      { method: req.method, url: req.url ?? '/', headers, body: body.toString('utf8') },
      options.secret,
    );
    if ('refused' in result) return refuseDelivery(req, res, result.refused.status, result.refused.message);
    const delivery = headers.get('x-gitea-delivery') ?? '(no X-Gitea-Delivery)';
    const found: Found[] =
      'outside' in result
        ? []
        : result.violations.map((violation) => ({ line: describeViolation(violation), count: violation.count ?? 1 }));
    const count = total(found);
    let answer: AppAnswer = { status: 200 };
    if (options.forward) answer = await forward(req, body, res, count);
    else {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Contract-Violations': String(count) });
      res.end('{}\n');
    }
    // What the app made of it, as its lines and files say it.
    const appLine =
      app === undefined
        ? undefined
        : 'status' in answer
          ? `the app at ${app} answered ${answer.status}`
          : `the app at ${app} could not be reached: ${answer.unreachable}`;
    const appFailed = app !== undefined && !delivered(answer);
    if (app !== undefined) {
      const key = 'status' in answer ? String(answer.status) : 'unreachable';
      appStatuses[key] = (appStatuses[key] ?? 0) + 1;
      if (appFailed) appRefused++;
    }
    const appProblems = appFailed ? [{ kind: 'app', line: appLine! }] : [];
    const status = 'status' in answer ? answer.status : undefined;
    const suffix = appLine === undefined ? '' : `; ${appLine}`;

    if ('outside' in result) {
      outside++;
      if (!options.quiet || appFailed)
        say(`gitea-mock: webhook ${delivery}: not checked: ${result.outside}${suffix}`, secrets);
      const operationId = redact(`delivery ${delivery}`, secrets);
      const cause = redact(result.outside, secrets);
      record(
        appFailed
          ? { operationId, checked: true, status, problems: appProblems, ms: 0, notChecked: `not checked: ${cause}` }
          : { operationId, checked: false, kind: 'outside', cause },
      );
      return;
    }
    checked++;
    stats.record(result.webhook, found, secrets);
    const label = `webhook ${result.webhook} ${result.action} ${delivery}`;
    if (count > 0) {
      broken++;
      say(
        `gitea-mock: contract: ${label}: ${count} violation${count > 1 ? 's' : ''}: ${found.map(({ line }) => line).join('; ')}${suffix}`,
        secrets,
      );
    } else if (!options.quiet || appFailed) say(`gitea-mock: ${label}: conforms${suffix}`, secrets);
    record({
      operationId: redact(`${result.webhook} ${result.action} ${delivery}`, secrets),
      checked: true,
      status,
      problems: [
        ...found.map(({ line, count: stands }) => ({ kind: kindOf(line), line: redact(line, secrets), count: stands })),
        ...appProblems,
      ],
      ms: 0,
    });
  }

  const server = createServer(
    {
      // As the mock's front: a connection that sends no request head within IDLE_TIMEOUT_MS, or
      // stays idle as long between deliveries, is closed, and a delivery must arrive whole within
      // 30 s, checked every second.
      requestTimeout: 30_000,
      headersTimeout: IDLE_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      if (connections.refused(req.socket)) return;
      handle(req, res).catch((error: unknown) => {
        say(`gitea-mock: receiver failure: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    },
  );
  const connections = limitConnections(server, Math.min(MAX_CONNECTIONS, defaultMaxConnections()), () => {
    const message = 'too many deliveries are being received at once; try again shortly\n';
    return [
      `HTTP/1.1 503 ${reasonPhrase(503)}`,
      'Retry-After: 1',
      'Content-Type: text/plain; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(message)}`,
      'Connection: close',
      '',
      message,
    ].join('\r\n');
  });
  // Requests Node's parser refuses never reach the handler; neither do those of a refused socket.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (connections.refused(socket) || error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
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
  const { address, port } = server.address() as AddressInfo;
  const origin = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  return {
    origin,
    webhooks: checker.names,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
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
      const clean = always;
      const forwarded = Object.values(appStatuses).reduce((sum, each) => sum + each, 0);
      if (options.report) {
        const report = {
          receiver: origin,
          started: started.toISOString(),
          finished: finished.toISOString(),
          webhooks: stats.byName(),
          notInContract: { deliveries: outside },
          refused: { deliveries: refused },
          ...(app === undefined
            ? {}
            : { forwarded: { app, deliveries: forwarded, refused: appRefused, statuses: appStatuses } }),
        };
        writeFileSync(options.report, `${redact(JSON.stringify(report, null, 2), clean)}\n`);
      }
      if (options.junit) {
        const run: RunRecord = {
          baseUrl: origin,
          server: `${checked + outside + refused} deliveries received, ${checked} of the contract`,
          started,
          finished,
          exitCode,
          stopped,
          outcomes,
        };
        writeFileSync(options.junit, junitXml(run, clean, 'gitea-mock webhooks'));
      }
      if (stopped) io.stderr(`gitea-mock: ${stopped}: exit code 2\n`);
      else {
        if (broken > 0) io.stderr(`gitea-mock: ${broken} of ${checked} deliveries broke the contract: exit code 1\n`);
        if (appRefused > 0)
          io.stderr(
            `gitea-mock: ${appRefused} of ${forwarded} deliveries ${appRefused === 1 ? 'was' : 'were'} refused by the app at ${app}: exit code 1\n`,
          );
      }
      return exitCode;
    },
  };
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
