// The serving commands: `gitea-mock [document]` (the examples, or --dynamic), `gitea-mock sandbox`
// and `gitea-mock proxy <url>`, on http://127.0.0.1:4010/api/v1 until `stop` aborts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heapLimit } from '../common/heap.js';
import * as opt from '../common/options.js';
import { Refusal, usageError } from '../common/refusal.js';
import { DOCUMENT } from '../contract/document-file.js';
import { kindOf } from '../contract/violation-kind.js';
import { faultsOption, latencyOption } from '../front/conditions.js';
import { checkOrigin } from '../front/cors.js';
import { junitXml } from '../live/junit.js';
import { openStateStore } from '../sandbox/open-state.js';
import { isPostgresUrl, postgresTarget } from '../sandbox/postgres-url.js';
import { worldBudget } from '../sandbox/sandbox-limits.js';
import type { DeliveryRecord, WebhookOptions } from '../webhooks/deliveries.js';

type Mode = 'mock' | 'sandbox' | 'proxy';
const SYNOPSIS = {
  mock: 'gitea-mock [options] [document]',
  sandbox: 'gitea-mock sandbox [options] [document]',
  proxy: 'gitea-mock proxy <url> [options] [document]',
};
const ABOUT = {
  mock: `Serves the Gitea API contract as a mock on http://127.0.0.1:4010/api/v1, answering from its
examples (or, with --dynamic, from its schemas). The other commands:

  gitea-mock sandbox [options]          a world per credential that remembers writes
  gitea-mock proxy <url> [options]      forwards to a real server, checking each exchange
  gitea-mock verify --base-url <url> [options]
                                        live mode: checks a real Gitea's or Forgejo's answers
  gitea-mock webhooks [options]         receives a real server's deliveries and checks them
  gitea-mock trigger <event> --repo <owner/name>
                                        fires a webhook event in a running sandbox
  PGPASSWORD=… gitea-mock postgres --data <dir>
                                        runs a PostgreSQL server for the sandbox's --state

Each says more with --help.`,
  sandbox: `Serves the contract from a world per credential that remembers writes, each seeded with the
same data. GITEA_WEBHOOK_SECRET, when set, is the secret its hooks sign their deliveries with
(without it deliveries go unsigned).`,
  proxy: `Forwards every request to the Gitea or Forgejo at <url> (such as https://gitea.example.org)
and checks each exchange against the contract; answers pass through unchanged.`,
};
const usageOf = (mode: Mode) => opt.usage(mode, SYNOPSIS[mode], ABOUT[mode]);

const text = (values: opt.Values, name: string) => values[name] as string | undefined;

/** The sandbox's webhook options: undefined when none was given and GITEA_WEBHOOK_SECRET is not set. */
async function webhookChoices(values: opt.Values, env: NodeJS.ProcessEnv): Promise<WebhookOptions | undefined> {
  const secret = env.GITEA_WEBHOOK_SECRET || undefined;
  const hooks = (values.webhook as string[] | undefined) ?? [];
  const allowed = text(values, 'webhook-allowed-hosts');
  const given = values['webhook-timeout'] !== undefined;
  if (secret === undefined && hooks.length === 0 && allowed === undefined && !given) return undefined;
  for (const hook of hooks)
    opt.httpUrl(hook, `--webhook ${hook}: give an http or https URL, such as http://127.0.0.1:9000/hook`);
  if (allowed !== undefined) {
    // Loaded here, with what sends the deliveries: a start without webhooks does not read it.
    const { hostMatcher } = await import('../webhooks/allowed-hosts.js');
    try {
      hostMatcher(allowed);
    } catch (error) {
      throw usageError(`--webhook-allowed-hosts: ${(error as Error).message}`);
    }
  }
  return {
    ...(secret === undefined ? {} : { secret }),
    systemHooks: hooks,
    ...(allowed === undefined ? {} : { allowedHosts: allowed }),
    timeoutMs: opt.seconds(values, 'webhook-timeout'),
  };
}

/** The command line checked, before anything loads: what startMockServer takes but the callbacks. */
async function parseServe(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const mode: Mode = argv[0] === 'sandbox' || argv[0] === 'proxy' ? argv[0] : 'mock';
  const { values, positionals } = opt.parseCommand(mode, mode === 'mock' ? argv : argv.slice(1));
  const state = text(values, 'state');
  // `ps` shows a process's command line to every user: without the database's password from here on.
  if (state !== undefined && isPostgresUrl(state)) {
    let target: ReturnType<typeof postgresTarget>;
    try {
      target = postgresTarget(state);
    } catch (error) {
      throw usageError((error as Error).message);
    }
    process.title = ['gitea-mock', ...argv].map(target.redact).join(' ');
  }
  if (values.help) return { mode, help: true } as const;
  const upstream = mode === 'proxy' ? positionals.shift() : undefined;
  if (mode === 'proxy' && upstream === undefined)
    throw usageError("give the upstream's URL, such as https://gitea.example.org");
  if (positionals.length > 1) throw usageError('give at most one document');
  const maxHeld = opt.count(values, 'max-held');
  const maxHeldPerCredential = opt.count(values, 'max-held-per-credential');
  if (maxHeldPerCredential !== undefined && maxHeldPerCredential > (maxHeld ?? Infinity))
    throw usageError(`--max-held-per-credential ${maxHeldPerCredential} is more than --max-held ${maxHeld}`);
  const latency = values.latency === undefined ? undefined : latencyOption(values.latency as string);
  if (typeof latency === 'string') throw usageError(latency);
  const faults = values.faults === undefined ? undefined : faultsOption(values.faults as string);
  if (typeof faults === 'string') throw usageError(faults);
  const corsOrigins = (values['cors-origin'] as string[] | undefined) ?? [];
  for (const origin of corsOrigins) {
    try {
      checkOrigin(origin);
    } catch (error) {
      throw usageError(`--cors-origin: ${(error as Error).message}`);
    }
  }
  const maxWorlds = opt.count(values, 'max-worlds') ?? opt.DEFAULTS['max-worlds'];
  const maxWorldBytes = opt.bytes(values, 'max-world-bytes', '16M');
  const proxy =
    upstream === undefined
      ? undefined
      : {
          upstream,
          strict: values.strict === true,
          allowInsecureUpstream: values['allow-insecure-http'] === true,
          timeoutMs: opt.seconds(values, 'upstream-timeout'),
          exchangeTimeoutMs: opt.seconds(values, 'exchange-timeout'),
          upstreamConnections: opt.count(values, 'upstream-connections', 4) ?? opt.DEFAULTS['upstream-connections'],
          corsOrigins,
          forwardCookies: values['forward-cookies'] === true,
        };
  const webhooks = mode === 'sandbox' ? await webhookChoices(values, env) : undefined;
  const maxBodyBytesInFlight = opt.bytes(values, 'max-body-bytes-in-flight', '256M');
  return {
    mode,
    help: false,
    values,
    document: positionals[0],
    port: opt.port(values, env, mode),
    host: text(values, 'host') ?? opt.DEFAULTS.host,
    limits: {
      ...(latency === undefined ? {} : { latency }),
      ...(faults === undefined ? {} : { faults }),
      ...(maxHeld === undefined ? {} : { maxHeld }),
      ...(maxHeldPerCredential === undefined ? {} : { maxHeldPerCredential }),
      ...(maxBodyBytesInFlight === undefined ? {} : { maxBodyBytesInFlight }),
    },
    proxy,
    report: opt.outputFile(values, 'report'),
    junit: opt.outputFile(values, 'junit'),
    sandbox: mode === 'sandbox' ? { state, maxWorlds, maxWorldBytes, webhooks } : undefined,
  };
}

/** The proxy's JSON report as JUnit, a test case per operation with a failure per distinct violation. */
function proxyJunit(report: {
  upstream: string;
  started: string;
  finished: string;
  operations: Record<string, { messages: Record<string, number> }>;
}): string {
  const outcomes = Object.entries(report.operations).map(([operationId, { messages }]) => ({
    operationId,
    checked: true as const,
    status: undefined,
    ms: 0,
    problems: Object.entries(messages).map(([line, count]) => ({ kind: kindOf(line), line, count })),
  }));
  const run = {
    baseUrl: report.upstream,
    server: `${report.upstream} through gitea-mock proxy`,
    stopped: undefined,
    exitCode: 0,
    outcomes,
  };
  return junitXml(
    { ...run, started: new Date(report.started), finished: new Date(report.finished) },
    [],
    'gitea-mock proxy',
  );
}

const plural = (count: number): string => `${count} exchange${count === 1 ? '' : 's'}`;

/** --fail-on-violation's exit code, said last: CI reads the reason next to it. */
function verdict(
  counts: { broken: number; checked: number; unanswered: number; failed: number },
  log: ReturnType<typeof opt.logger>,
): number {
  const { broken, checked, unanswered, failed } = counts;
  const notAnswered = `${plural(unanswered)} of the contract got no answer from the upstream (the proxy answered ${unanswered === 1 ? 'it' : 'them'} itself)`;
  const flag = ': exit code {} (--fail-on-violation)';
  const [code, line] =
    broken > 0
      ? [1, `${plural(broken)} broke the contract${flag}`]
      : // A check that failed is the proxy's failure: the traffic is neither passed nor failed.
        failed > 0
        ? [
            2,
            `the proxy's own check failed on ${plural(failed)} (a bug in gitea-mock; the warnings above say where)${flag}`,
          ]
        : // A job whose traffic never reached the upstream, or never came, checked nothing: it must not pass.
          checked === 0
          ? [
              2,
              `no exchange of the contract was checked: ${unanswered > 0 ? notAnswered : 'none went through the proxy'}${flag}`,
            ]
          : [0, unanswered > 0 ? `${notAnswered}, not checked; ${plural(checked)} checked, each conforms` : ''];
  if (line) log.err(line.replace('{}', String(code)));
  return code;
}

/** Runs `gitea-mock [sandbox|proxy] …` until `stop` aborts; resolves with the exit code. */
export async function serve(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: opt.Io,
  stop: AbortSignal,
): Promise<number> {
  const log = opt.logger(io, 'gitea-mock');
  let options: Awaited<ReturnType<typeof parseServe>>;
  try {
    options = await parseServe(argv, env);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return log.usage(error, usageOf(argv[0] === 'sandbox' || argv[0] === 'proxy' ? argv[0] : 'mock'));
  }
  if (options.help) {
    io.stdout(usageOf(options.mode));
    return 0;
  }
  const { values, proxy, sandbox } = options;
  const counts = { broken: 0, checked: 0, unanswered: 0, failed: 0 };
  // --junit alone: the report goes to a folder of its own, read back when the proxy stops.
  const scratch = options.junit && !options.report ? mkdtempSync(join(tmpdir(), 'gitea-mock-proxy-')) : undefined;
  const report = options.report ?? (scratch && join(scratch, 'report.json'));
  let mock;
  try {
    // Limits that do not fit, a state folder that is not one, cannot be written or is in use, are
    // refused before Prism loads: at once, not after a second.
    const budget = sandbox ? worldBudget(sandbox.maxWorlds, sandbox.maxWorldBytes, heapLimit()) : 0;
    const document = options.document ?? DOCUMENT;
    const store =
      sandbox?.state === undefined
        ? undefined
        : await openStateStore(sandbox.state, { maxWorlds: sandbox.maxWorlds, maxWorldBytes: budget, document });
    const webhooks = sandbox?.webhooks && {
      ...sandbox.webhooks,
      // A line per delivery, as per request: where it went and how it ended.
      ...(values.quiet
        ? {}
        : {
            onDelivery: ({ type, action, url, state, status, error, durationMs }: DeliveryRecord) =>
              log.plain(
                `webhook ${type} ${action} to ${url}: ${status === undefined ? `${state}${error ? ` (${error})` : ''}` : `${status}`}${durationMs === undefined ? '' : ` ${durationMs}ms`}`,
              ),
          }),
    };
    // Loaded after the arguments are checked: Prism takes most of the start-up time.
    const { startMockServer } = await import('../server.js');
    mock = await startMockServer({
      ...(options.document === undefined ? {} : { document: options.document }),
      port: options.port,
      host: options.host,
      dynamic: values.dynamic === true,
      ...(values.seed === undefined ? {} : { seed: values.seed as string }),
      ...options.limits,
      ...(proxy && {
        proxy: {
          ...proxy,
          ...(report === undefined ? {} : { report }),
          // The point of the proxy: shown even with --quiet.
          onViolations: (line: string) => {
            counts.broken++;
            log.out(`contract: ${line}`);
          },
          onExchange: (checked: boolean | 'check failed') =>
            void (checked === 'check failed' ? counts.failed++ : checked ? counts.checked++ : counts.unanswered++),
          onWarning: (line: string) => log.err(`warning: ${line}`),
        },
      }),
      ...(sandbox && {
        sandbox: {
          ...(store === undefined ? {} : { state: store.path, store, document }),
          ...(values['max-worlds'] === undefined ? {} : { maxWorlds: sandbox.maxWorlds }),
          ...(sandbox.maxWorldBytes === undefined ? {} : { maxWorldBytes: sandbox.maxWorldBytes }),
          ...(webhooks === undefined ? {} : { webhooks }),
        },
      }),
      ...(values.quiet ? {} : { onRequest: log.plain }),
      onWarning: (line) => log.err(`warning: ${line}`),
    });
    const mode = proxy
      ? `proxy to ${new URL(proxy.upstream).origin}${proxy.strict ? ', strict' : ''}`
      : sandbox
        ? `sandbox${store === undefined ? '' : `, state in ${store.path}`}`
        : values.dynamic
          ? `dynamic data${values.seed === undefined ? '' : `, seed ${values.seed}`}`
          : 'examples';
    const conditions = [
      ...(values.latency === undefined ? [] : [`latency ${values.latency} ms`]),
      ...(values.faults === undefined ? [] : [`faults ${values.faults}`]),
    ];
    if (conditions.length > 0 && values.seed !== undefined && !values.dynamic) conditions.push(`seed ${values.seed}`);
    log.out(
      `${mock.operations.length} operations on ${mock.baseUrl} (${[mode, ...conditions].join(', ')}); Ctrl-C stops`,
    );
  } catch (error) {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    // A package the install left out (a copied or pruned node_modules) is named, with the way back.
    const missing =
      (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
        ? /Cannot find (?:package|module) '([^'./][^']*)'/.exec(String(error))?.[1]
        : undefined;
    log.err(
      `cannot start: ${missing !== undefined ? `gitea-mock's dependency ${missing} is not installed; install gitea-mock again, with its dependencies` : error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
  await new Promise((done) => (stop.aborted ? done(undefined) : stop.addEventListener('abort', done, { once: true })));
  try {
    await mock.close();
    if (options.junit && report) writeFileSync(options.junit, proxyJunit(JSON.parse(readFileSync(report, 'utf8'))));
  } catch (error) {
    // The report's folder was there at start; it may have gone, or the disk filled, since.
    log.err(`the report was not written: ${error instanceof Error ? error.message : String(error)}`);
    return values['fail-on-violation'] ? verdict(counts, log) || 1 : 1;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  return values['fail-on-violation'] ? verdict(counts, log) : 0;
}
