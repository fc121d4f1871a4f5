// `gitea-mock webhooks`: receives a real Gitea's webhook deliveries and checks each against the document.
import { timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { NodeRequest } from 'srvx/node';
import { readBounded } from '../common/bytes.js';
import { networkFailure } from '../common/network-failure.js';
import { httpUrl, type Io, logger, parseCommand, usage } from '../common/options.js';
import { redact } from '../common/redaction.js';
import { usageError } from '../common/refusal.js';
import { joinedTarget, originFormRefusal } from '../common/request-target.js';
import { bodyViolations, describeViolation, headerViolations, type Violation } from '../contract/conformance.js';
import type { ServerProfile } from 'gitea-contract';
import { BASE_PROFILE, profileDocument, readDocumentFile } from '../contract/document-file.js';
import { isObject, type JsonObject, listWebhooks, operationParameters, webhookActions } from '../contract/document.js';
import { createExchangeReport, type Found, kindOf, total } from '../contract/exchange-report.js';
import { MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { createSchemaValidator } from '../contract/schema.js';
import { createBodyBudget, defaultBodyBudget, GO_MAX_DEPTH, pastJsonBounds, readBodyBytes } from '../front/body.js';
import { defaultMaxConnections, listen, TEXT } from '../front/node-server.js';
import { junitXml, type Outcome, type Problem } from '../live/junit.js';
import { signatureHeaders } from './deliveries.js';
import { ANSWER_LIMIT, nodeSign } from './transport-node.js';

const USAGE = usage(
  'webhooks',
  'GITEA_WEBHOOK_SECRET=… gitea-mock webhooks [options]',
  `
Receives webhook deliveries (point a Gitea hook at it), checks each against the contract's
webhooks (headers, signatures with the hook's secret from GITEA_WEBHOOK_SECRET, payload), prints
a line per delivery and, when stopped, exits 2 if none of the contract was received, 1 if any
broke the contract or the --forward app refused one (answered other than 2xx, or could not be
reached), 0 otherwise.`,
);

const FORWARD_TIMEOUT_MS = 30_000;
/** A delivery names no release: Forgejo's is checked against its long-term-support line's profile. */
const FORGEJO_DELIVERIES: ServerProfile = 'forgejo-11';
/** Deliveries whose results the JUnit XML lists; past that they are counted only. */
const OUTCOMES = 10_000;
/** Headers not passed on to the app: they belong to each connection. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length', 'upgrade']);
/** Thrice the 10 workers of the queue Gitea sends deliveries from (modules/setting/queue.go, `MaxWorkers`). */
const MAX_CONNECTIONS = 32;
const BUSY = 'too many deliveries are being received at once; try again shortly';

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A delivery is the webhook of its `X-Gitea-Event-Type` with an action it declares, else outside the contract. */
function createDeliveryChecker(doc: JsonObject, secret: string | undefined) {
  const schemas = createSchemaValidator(doc);
  const webhooks = new Map(listWebhooks(doc).map((webhook) => [webhook.path, webhook]));
  /** A payload past the bounds of every JSON body the mock reads is `refused`, as the front refuses such a body. */
  const check = ({ method, url, headers, body }: { method: string; url: string; headers: Headers; body: string }) => {
    const type = headers.get('x-gitea-event-type') ?? '';
    const webhook = webhooks.get(type);
    if (!webhook)
      return {
        outside: `${type ? `the event type ${JSON.stringify(type)}` : 'a request without X-Gitea-Event-Type'} is not in the contract (it describes ${[...webhooks.keys()].join(', ')})`,
      };
    const violations: Violation[] = [];
    const add = (where: string, problem: string): void => void violations.push({ where, problem });
    const media = headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
    const requestBody = webhook.operation.requestBody as JsonObject;
    const declared = Object.keys(isObject(requestBody.content) ? requestBody.content : {});
    let text: string | null = body;
    if (method === 'GET') text = new URL(url, 'http://receiver').searchParams.get('payload');
    else if (!declared.includes(media))
      add('content type', `${media || '(none)'} is not declared (declared: ${declared.join(', ')})`);
    else if (media === 'application/x-www-form-urlencoded') text = new URLSearchParams(body).get('payload');
    let payload: unknown;
    try {
      if (text === null) add('body', 'has no payload field');
      else payload = JSON.parse(text);
    } catch {
      add('body', 'the payload is not valid JSON');
    }
    const past = pastJsonBounds(payload);
    const refused = (status: number, beyond: string) => ({
      refused: { status, message: `the payload ${beyond}, more than the receiver checks` },
    });
    if (past === 'values') return refused(413, `holds more than ${MAX_CHECKED_VALUES} JSON values`);
    if (past === 'depth') return refused(422, `nests deeper than ${GO_MAX_DEPTH} levels`);
    const action = isObject(payload) && typeof payload.action === 'string' ? payload.action : '';
    const actions = webhookActions(doc, type) ?? [];
    if (payload !== undefined && action !== '' && !actions.includes(action))
      return {
        outside: `${type} with the action ${JSON.stringify(action)} is not in the contract (it describes ${actions.join(', ')})`,
      };
    const declaredHeaders = operationParameters(doc, webhook)
      .filter(({ param }) => param.in === 'header')
      .map(({ param, location }) => ({ name: String(param.name), spec: param, location }));
    violations.push(...headerViolations(schemas, declaredHeaders, headers));
    if (secret !== undefined && text !== null) {
      const signatures = nodeSign(secret, text);
      // Forgejo's own beside Gitea's, where it is sent.
      const expected = { ...signatureHeaders(signatures), 'X-Forgejo-Signature': signatures.sha256 };
      for (const [name, value] of Object.entries(expected)) {
        const sent = headers.get(name);
        if (sent !== null && !sameText(sent, value))
          add(
            `header ${name}:`,
            /^(sha1=|sha256=)?$/.test(sent)
              ? 'is empty: the hook has no secret'
              : 'does not match the payload signed with the secret given',
          );
      }
    }
    const schemaAt = `${webhook.location}/requestBody/content/application~1json/schema`;
    // What a violation quotes is redacted before it is cut.
    const redacted = (quote: string) => redact(quote, [secret ?? '', headers.get('authorization') ?? '']);
    if (payload !== undefined) violations.push(...bodyViolations(schemas, schemaAt, payload, redacted));
    const found = violations.map((one) => ({ line: `request ${describeViolation(one)}`, count: one.count ?? 1 }));
    return { webhook: type, action, found };
  };
  return { names: [...webhooks.keys()], check };
}

const headersOf = (req: IncomingMessage): Headers =>
  new Headers(Object.entries(req.headers).flatMap(([name, value]) => [value ?? []].flat().map((each) => [name, each])));

/** Undefined for --help; a wrong option is a usage error, told before anything listens. */
function parseOptions(args: string[], env: NodeJS.ProcessEnv) {
  const options = parseCommand('webhooks', args);
  if (options.positionals.length > 0) throw usageError('gitea-mock webhooks takes options only');
  if (options.help) return undefined;
  const forward = options.text('forward');
  const hint = `--forward ${forward}: give an http or https URL of your app`;
  return {
    port: options.port(env),
    host: options.text('host')!,
    secret: env.GITEA_WEBHOOK_SECRET || undefined,
    forward: forward === undefined ? undefined : httpUrl(forward, hint),
    report: options.file('report'),
    junit: options.file('junit'),
    quiet: options.flag('quiet'),
    server: options.server(),
  };
}

/** What the receiver has seen; no line or file shows the secret (`always`), nor the Authorization a delivery carried. */
function createTally(options: NonNullable<ReturnType<typeof parseOptions>>, io: Io) {
  const always = options.secret ? [options.secret] : [];
  const outcomes: Outcome[] = [];
  const checkers = new Map<ServerProfile, ReturnType<typeof createDeliveryChecker>>();
  return {
    options,
    app: options.forward?.origin,
    checkers,
    /** The checker of a delivery's server: the one named, else Forgejo's for a delivery with X-Forgejo-Event, else the base. */
    checkerOf(headers: Headers) {
      const profile = options.server ?? (headers.has('x-forgejo-event') ? FORGEJO_DELIVERIES : BASE_PROFILE);
      const document = () => readDocumentFile(profileDocument(profile)).document;
      const checker =
        checkers.get(profile) ?? checkers.set(profile, createDeliveryChecker(document(), options.secret)).get(profile)!;
      return { profile, checker };
    },
    /** Deliveries checked, by the profile they were checked against. */
    profiles: {} as Record<string, number>,
    stats: createExchangeReport(),
    // The bytes of deliveries read or being handled at once, as the mock's front bounds its bodies.
    bodies: createBodyBudget(defaultBodyBudget(getHeapStatistics().heap_size_limit)),
    started: new Date(),
    outcomes,
    counts: { outside: 0, refused: 0, broken: 0, checked: 0, appRefused: 0 },
    /** What the app answered, by status (`unreachable` when it did not). */
    appStatuses: {} as Record<string, number>,
    always,
    say: (line: string, secrets = always): void => io.stdout(`${redact(line, secrets)}\n`),
    record: (outcome: Outcome): void => void (outcomes.length < OUTCOMES && outcomes.push(outcome)),
  };
}

type Tally = ReturnType<typeof createTally>;

/** The connection closes, what is left of the request unread. */
function refuse(tally: Tally, req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  tally.counts.refused++;
  const path = (req.url?.split('?')[0] ?? '/').slice(0, 200);
  tally.say(`gitea-mock: a delivery to ${path} was refused (${status}): ${message}`);
  const [kind, cause] = [status === 400 ? 'outside' : 'too-large', `refused (${status}): ${message}`] as const;
  tally.record({ operationId: `delivery to ${path}`, checked: false, kind, cause });
  const text = `${message}\n`;
  res.writeHead(status, { 'Content-Type': TEXT, 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
  res.end(text);
}

/** Passes the delivery on to the app and its answer back; `status` undefined when the app could not be reached. */
async function forward(
  { options, app }: Tally,
  req: IncomingMessage,
  res: ServerResponse,
  delivery: { headers: Headers; body: Buffer; violations: Record<string, string> },
): Promise<{ status: number | undefined; appLine: string }> {
  try {
    const answer = await fetch(joinedTarget(options.forward!, req.url ?? '/'), {
      method: req.method!,
      headers: new Headers([...delivery.headers].filter(([name]) => !HOP_BY_HOP.has(name))),
      ...(req.method === 'GET' ? {} : { body: new Uint8Array(delivery.body) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const bytes = (await readBounded(answer.body, ANSWER_LIMIT)).bytes.subarray(0, ANSWER_LIMIT);
    const type = answer.headers.get('content-type');
    res.writeHead(answer.status, {
      ...(type ? { 'Content-Type': type } : {}),
      'Content-Length': bytes.length,
      ...delivery.violations,
    });
    res.end(bytes);
    return { status: answer.status, appLine: `the app at ${app} answered ${answer.status}` };
  } catch (error) {
    const cause =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : (networkFailure(error).code ?? (error as Error).message);
    const appLine = `the app at ${app} could not be reached: ${cause}`;
    res.writeHead(502, { 'Content-Type': TEXT, ...delivery.violations });
    res.end(`${appLine}\n`);
    return { status: undefined, appLine };
  }
}

async function handle(tally: Tally, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { options, app, counts, say } = tally;
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
  const { profile, checker } = tally.checkerOf(headers);
  const result = checker.check({ method: req.method, url: req.url ?? '/', headers, body: body.toString('utf8') });
  if ('refused' in result) return refuse(tally, req, res, result.refused.status, result.refused.message);
  const found: Found[] = 'outside' in result ? [] : result.found;
  const count = total(found);
  const violations = { 'X-Contract-Violations': String(count) };
  let status: number | undefined = 200;
  let appLine: string | undefined;
  if (options.forward) {
    ({ status, appLine } = await forward(tally, req, res, { headers, body, violations }));
    const key = String(status ?? 'unreachable');
    tally.appStatuses[key] = (tally.appStatuses[key] ?? 0) + 1;
  } else {
    res.writeHead(200, { 'Content-Type': 'application/json', ...violations });
    res.end('{}\n');
  }
  // Gitea counts only a 2xx as delivered (services/webhook/deliver.go, `Deliver`).
  const appFailed = app !== undefined && !(status !== undefined && status >= 200 && status < 300);
  if (appFailed) counts.appRefused++;
  const appProblems: Problem[] = appFailed ? [{ kind: 'app', line: appLine! }] : [];
  const suffix = appLine === undefined ? '' : `; ${appLine}`;
  const delivery = headers.get('x-gitea-delivery') ?? '(no X-Gitea-Delivery)';
  const loud = !options.quiet || appFailed;
  if ('outside' in result) {
    counts.outside++;
    if (loud) say(`gitea-mock: webhook ${delivery}: not checked: ${result.outside}${suffix}`, secrets);
    const operationId = redact(`delivery ${delivery}`, secrets);
    const cause = redact(result.outside, secrets);
    return tally.record(
      appFailed
        ? { operationId, checked: true, status, problems: appProblems, ms: 0, notChecked: `not checked: ${cause}` }
        : { operationId, checked: false, kind: 'outside', cause },
    );
  }
  counts.checked++;
  tally.profiles[profile] = (tally.profiles[profile] ?? 0) + 1;
  tally.stats.record(result.webhook, found, secrets);
  const label = `webhook ${result.webhook} ${result.action} ${delivery}${profile === BASE_PROFILE ? '' : ` (${profile})`}`;
  if (count > 0) {
    counts.broken++;
    const lines = found.map(({ line }) => line).join('; ');
    say(`gitea-mock: contract: ${label}: ${count} violation${count > 1 ? 's' : ''}: ${lines}${suffix}`, secrets);
  } else if (loud) say(`gitea-mock: ${label}: conforms${suffix}`, secrets);
  const problems = found.map(({ line, count: of }) => ({ kind: kindOf(line), line: redact(line, secrets), count: of }));
  const operationId = redact(`${result.webhook} ${result.action} ${delivery}`, secrets);
  tally.record({ operationId, checked: true, status, problems: [...problems, ...appProblems], ms: 0 });
}

function conclude(tally: Tally, origin: string, io: Io): number {
  const { options, app, counts, appStatuses, always, started } = tally;
  const { checked, outside, refused, broken, appRefused } = counts;
  const exitCode = checked === 0 ? 2 : broken > 0 || appRefused > 0 ? 1 : 0;
  const notChecked = [outside > 0 && `${outside} outside it`, refused > 0 && `${refused} refused`].filter(Boolean);
  const stopped =
    checked === 0
      ? `no delivery of the contract was received${notChecked.length > 0 ? ` (${notChecked.join(', ')})` : ''}`
      : undefined;
  const finished = new Date();
  const forwarded = Object.values(appStatuses).reduce((sum, each) => sum + each, 0);
  if (options.report) {
    const report = {
      receiver: origin,
      started: started.toISOString(),
      finished: finished.toISOString(),
      webhooks: tally.stats.byName(),
      profiles: tally.profiles,
      notInContract: { deliveries: outside },
      refused: { deliveries: refused },
      // Left out without --forward: JSON has no undefined.
      forwarded: options.forward && { app, deliveries: forwarded, refused: appRefused, statuses: appStatuses },
    };
    writeFileSync(options.report, `${redact(JSON.stringify(report, null, 2), always)}\n`);
  }
  if (options.junit) {
    const server = `${checked + outside + refused} deliveries received, ${checked} of the contract`;
    const run = { baseUrl: origin, server, started, finished, exitCode, stopped, outcomes: tally.outcomes };
    writeFileSync(options.junit, junitXml(run, always, 'gitea-mock webhooks'));
  }
  if (stopped) io.stderr(`gitea-mock: ${stopped}: exit code 2\n`);
  if (!stopped && broken > 0)
    io.stderr(`gitea-mock: ${broken} of ${checked} deliveries broke the contract: exit code 1\n`);
  if (!stopped && appRefused > 0)
    io.stderr(
      `gitea-mock: ${appRefused} of ${forwarded} deliveries ${appRefused === 1 ? 'was' : 'were'} refused by the app at ${app}: exit code 1\n`,
    );
  return exitCode;
}

/** Until SIGINT or SIGTERM; resolves with the exit code. */
export async function receiveWebhooks(args: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const log = logger(io, 'gitea-mock webhooks');
  const options = await log.options(USAGE, () => parseOptions(args, env));
  if (typeof options === 'number') return options;
  let tally: Tally;
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    tally = createTally(options, io);
    // The front's bounds: a delivery must arrive whole within 30 s; past the connections, a 503.
    server = await listen((req, res) => handle(tally, req, res).then(() => res.statusCode), {
      port: options.port,
      host: options.host,
      ceiling: Math.min(MAX_CONNECTIONS, defaultMaxConnections()),
      slowRequests: false,
      busy: BUSY,
      warn: (line) => tally.say(`gitea-mock: ${line}`),
    });
  } catch (error) {
    log.err(`cannot start: ${(error as Error).message}`);
    return 2;
  }
  const { origin } = server;
  const { names } = tally.checkerOf(new Headers()).checker;
  const against = options.server ?? `${BASE_PROFILE}, or ${FORGEJO_DELIVERIES} for a delivery with X-Forgejo-Event`;
  // Listened for before the line that says the receiver is up: one sent once it is read must find them.
  const stopped = new Promise((stop) => {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  io.stdout(
    `gitea-mock: receiving webhook deliveries on ${origin}/, checked against the contract's ${names.length} webhooks (${against}); Ctrl-C stops\n`,
  );
  await stopped;
  await server.close();
  try {
    return conclude(tally, origin, io);
  } catch (error) {
    log.err(`the results were not written: ${(error as Error).message}`);
    return 2;
  }
}
