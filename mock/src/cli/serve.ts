// The serving commands: `gitea-mock [document]`, `gitea-mock sandbox`, `gitea-mock proxy <url>`, until `stop` aborts.
import { writeFileSync } from 'node:fs';
import { httpUrl, type Io, logger, parseCommand, refusing, usage } from '../common/options.js';
import { usageError } from '../common/refusal.js';
import { kindOf } from '../contract/exchange-report.js';
import { faultsOption, latencyOption } from '../front/conditions.js';
import { checkOrigin } from '../front/cors.js';
import { junitXml } from '../live/junit.js';
import { isPostgresUrl, postgresTarget } from '../sandbox/postgres-url.js';
import type { DeliveryRecord } from '../webhooks/deliveries.js';
import type { ProxyReport } from '../proxy/proxy.js';

type Mode = 'mock' | 'sandbox' | 'proxy';
const HELP: Record<Mode, [string, string]> = {
  mock: [
    'gitea-mock [options] [document]',
    `Serves the Gitea API contract as a mock on http://127.0.0.1:4010/api/v1, answering from its
examples (or, with --dynamic, from its schemas). The other commands, each with its --help:

  gitea-mock sandbox [options]            a world per credential that remembers writes
  gitea-mock proxy <url> [options]        forwards to a real server, checking each exchange
  gitea-mock verify --base-url <url> [options]
                                          live mode: checks a real Gitea's or Forgejo's answers
  gitea-mock webhooks [options]           receives a real server's deliveries and checks them
  gitea-mock trigger <event> --repo <o/n> fires a webhook event in a running sandbox
  PGPASSWORD=… gitea-mock postgres --data <dir>
                                          runs a PostgreSQL server for the sandbox's --state`,
  ],
  sandbox: [
    'gitea-mock sandbox [options] [document]',
    `Serves the contract from a world per credential that remembers writes, each seeded with the
same data. GITEA_WEBHOOK_SECRET, when set, is the secret its hooks sign their deliveries with
(without it deliveries go unsigned).`,
  ],
  proxy: [
    'gitea-mock proxy <url> [options] [document]',
    `Forwards every request to the Gitea or Forgejo at <url> (such as https://gitea.example.org)
and checks each exchange against the contract; answers pass through unchanged.`,
  ],
};
/** `{ key: value }`, or nothing when the value is undefined (the options take no undefined). */
const some = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [key in K]?: V };

/** The command line checked, before anything loads: startMockServer's options but the callbacks. */
async function parseServe(mode: Mode, argv: readonly string[], env: NodeJS.ProcessEnv) {
  const args = parseCommand(mode, mode === 'mock' ? argv : argv.slice(1));
  const state = args.text('state');
  const database = state !== undefined && isPostgresUrl(state) ? refusing('', () => postgresTarget(state)) : undefined;
  // `ps` shows a process's command line to every user: without the database's password from here on.
  if (database) process.title = ['gitea-mock', ...argv].map(database.redact).join(' ');
  if (args.help) return undefined;
  const upstream = mode === 'proxy' ? args.positionals.shift() : undefined;
  if (mode === 'proxy' && upstream === undefined)
    throw usageError("give the upstream's URL, such as https://gitea.example.org");
  if (args.positionals.length > 1) throw usageError('give at most one document');
  const named = args.server();
  if (named && args.positionals.length > 0) throw usageError('give --server or a document, not both');
  const [maxHeld, maxHeldPerCredential] = [args.count('max-held'), args.count('max-held-per-credential')];
  if (maxHeldPerCredential !== undefined && maxHeldPerCredential > (maxHeld ?? Infinity))
    throw usageError(`--max-held-per-credential ${maxHeldPerCredential} is more than --max-held ${maxHeld}`);
  const condition = <T>(name: string, parse: (text: string) => T | string): T | undefined => {
    const value = args.text(name) === undefined ? undefined : parse(args.text(name)!);
    if (typeof value === 'string') throw usageError(value);
    return value;
  };
  const [latency, faults] = [condition('latency', latencyOption), condition('faults', faultsOption)];
  const corsOrigins = args.list('cors-origin');
  for (const origin of corsOrigins) refusing('--cors-origin: ', () => checkOrigin(origin));
  const hooks = args.list('webhook');
  for (const hook of hooks)
    httpUrl(hook, `--webhook ${hook}: give an http or https URL, such as http://127.0.0.1:9000/hook`);
  const allowedHosts = args.text('webhook-allowed-hosts');
  // Loaded only then, with what sends the deliveries: a start without webhooks does not read it.
  if (allowedHosts !== undefined) {
    const { hostMatcher } = await import('../webhooks/allowed-hosts.js');
    refusing('--webhook-allowed-hosts: ', () => hostMatcher(allowedHosts));
  }
  const secret = env.GITEA_WEBHOOK_SECRET || undefined;
  const webhooks = [secret, allowedHosts, args.given('webhook-timeout') || undefined, hooks[0]].some(Boolean)
    ? { ...some('secret', secret), systemHooks: hooks, ...some('allowedHosts', allowedHosts) }
    : undefined;
  const sandbox = {
    ...some('state', state),
    ...some('webhooks', webhooks && { ...webhooks, timeoutMs: args.seconds('webhook-timeout') }),
    ...some('maxWorlds', args.given('max-worlds') ? args.count('max-worlds') : undefined),
    ...some('maxWorldBytes', args.bytes('max-world-bytes', '16M')),
  };
  const server = {
    ...some('document', args.positionals[0]),
    ...some('server', named),
    port: args.port(env),
    host: args.text('host')!,
    dynamic: args.flag('dynamic'),
    ...some('seed', args.text('seed')),
    ...some('latency', latency),
    ...some('faults', faults),
    ...some('maxHeld', maxHeld),
    ...some('maxHeldPerCredential', maxHeldPerCredential),
    ...some('maxBodyBytesInFlight', args.bytes('max-body-bytes-in-flight', '256M')),
  };
  const proxy = upstream !== undefined && {
    upstream,
    strict: args.flag('strict'),
    allowInsecureUpstream: args.flag('allow-insecure-http'),
    timeoutMs: args.seconds('upstream-timeout'),
    exchangeTimeoutMs: args.seconds('exchange-timeout'),
    upstreamConnections: args.count('upstream-connections', 4)!,
    corsOrigins,
    forwardCookies: args.flag('forward-cookies'),
  };
  return {
    args,
    server,
    proxy,
    report: args.file('report'),
    junit: args.file('junit'),
    sandbox: mode === 'sandbox' ? sandbox : undefined,
    shownState: database?.shown ?? state,
  };
}

/** The proxy's JSON report as JUnit, a test case per operation with a failure per distinct violation. */
function proxyJunit({ upstream, started, finished, operations }: ProxyReport): string {
  const outcomes = Object.entries(operations).map(([operationId, { messages }]) => ({
    ...{ operationId, checked: true as const, status: undefined, ms: 0 },
    problems: Object.entries(messages).map(([line, count]) => ({ kind: kindOf(line), line, count })),
  }));
  const run = { baseUrl: upstream, server: `${upstream} through gitea-mock proxy`, stopped: undefined, exitCode: 0 };
  const dates = { started: new Date(started), finished: new Date(finished) };
  return junitXml({ ...run, ...dates, outcomes }, [], 'gitea-mock proxy');
}

const plural = (count: number): string => `${count} exchange${count === 1 ? '' : 's'}`;

/** --fail-on-violation's exit code and its line, said last: CI reads the reason next to the code. */
function verdict(counts: Record<'broken' | 'checked' | 'unanswered' | 'failed', number>): readonly [number, string] {
  const { broken, checked, unanswered, failed } = counts;
  const notAnswered = `${plural(unanswered)} of the contract got no answer from the upstream (the proxy answered ${unanswered === 1 ? 'it' : 'them'} itself)`;
  const exit = (code: number, why: string) => [code, `${why}: exit code ${code} (--fail-on-violation)`] as const;
  if (broken > 0) return exit(1, `${plural(broken)} broke the contract`);
  // A check that failed is the proxy's failure: the traffic is neither passed nor failed.
  if (failed > 0)
    return exit(
      2,
      `the proxy's own check failed on ${plural(failed)} (a bug in gitea-mock; the warnings above say where)`,
    );
  // A job whose traffic never reached the upstream, or never came, checked nothing: it must not pass.
  const none = unanswered > 0 ? notAnswered : 'none went through the proxy';
  if (checked === 0) return exit(2, `no exchange of the contract was checked: ${none}`);
  return [0, unanswered > 0 ? `${notAnswered}, not checked; ${plural(checked)} checked, each conforms` : ''] as const;
}

/** Runs `gitea-mock [sandbox|proxy <url>] …` until `stop` aborts; resolves with the exit code. */
export async function serve(argv: readonly string[], env: NodeJS.ProcessEnv, io: Io, stop: AbortSignal) {
  const log = logger(io, 'gitea-mock');
  const warn = (line: string): void => log.err(`warning: ${line}`);
  const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  const mode: Mode = argv[0] === 'sandbox' || argv[0] === 'proxy' ? argv[0] : 'mock';
  const options = await log.options(usage(mode, ...HELP[mode]), () => parseServe(mode, argv, env));
  if (typeof options === 'number') return options;
  const { args, proxy, sandbox, junit } = options;
  const quiet = args.flag('quiet');
  const counts = { broken: 0, checked: 0, unanswered: 0, failed: 0 };
  let mock: Awaited<ReturnType<typeof import('../server.js').startMockServer>>;
  try {
    const onDelivery = ({ type, action, url, state, status, error, durationMs }: DeliveryRecord) =>
      log.plain(
        `webhook ${type} ${action} to ${url}: ${status ?? `${state}${error ? ` (${error})` : ''}`}${durationMs === undefined ? '' : ` ${durationMs}ms`}`,
      );
    const { webhooks } = sandbox ?? {};
    // Asked first, unless named: the server behind the proxy says which it is, and its profile checks it.
    const asked = proxy && !options.server.server && !options.server.document;
    const detected = asked ? await (await import('../proxy/upstream-server.js')).upstreamServer(proxy) : undefined;
    if (detected?.warning) warn(detected.warning);
    // Loaded after the arguments are checked: Prism takes most of the start-up time.
    const { startMockServer } = await import('../server.js');
    mock = await startMockServer({
      ...options.server,
      ...some('server', detected?.profile),
      ...(proxy && {
        proxy: {
          ...proxy,
          ...some('upstreamServer', detected?.server),
          // The point of the proxy: shown even with --quiet.
          onViolations: (line: string) => {
            counts.broken++;
            log.out(`contract: ${line}`);
          },
          onExchange: (checked: boolean | 'check failed') =>
            void counts[checked === 'check failed' ? 'failed' : checked ? 'checked' : 'unanswered']++,
          onWarning: warn,
        },
      }),
      ...(sandbox && {
        sandbox: { ...sandbox, ...some('webhooks', webhooks && { ...webhooks, ...(quiet ? {} : { onDelivery }) }) },
      }),
      ...(quiet ? {} : { onRequest: log.plain }),
      onWarning: warn,
    });
    const { seed, dynamic } = options.server;
    const [latency, faults] = [args.text('latency'), args.text('faults')];
    const conditions = [...(latency ? [`latency ${latency} ms`] : []), ...(faults ? [`faults ${faults}`] : [])];
    if (conditions.length > 0 && seed !== undefined && !dynamic) conditions.push(`seed ${seed}`);
    const mode = proxy
      ? `proxy to ${new URL(proxy.upstream).origin}${proxy.strict ? ', strict' : ''}`
      : sandbox
        ? `sandbox${options.shownState === undefined ? '' : `, state in ${options.shownState}`}`
        : dynamic
          ? `dynamic data${seed === undefined ? '' : `, seed ${seed}`}`
          : 'examples';
    const profile = detected?.profile ?? options.server.server;
    const as =
      profile === undefined
        ? []
        : [proxy ? `checked as ${profile}${detected?.server ? ` (${detected.server})` : ''}` : `as ${profile}`];
    log.out(
      `${mock.operations.length} operations on ${mock.baseUrl} (${[mode, ...as, ...conditions].join(', ')}); Ctrl-C stops`,
    );
  } catch (error) {
    // A package the install left out (a copied or pruned node_modules) is named, with the way back.
    const missing =
      (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      /Cannot find (?:package|module) '([^'./][^']*)'/.exec(String(error))?.[1];
    log.err(
      `cannot start: ${missing ? `gitea-mock's dependency ${missing} is not installed; install gitea-mock again, with its dependencies` : message(error)}`,
    );
    return 1;
  }
  await new Promise((done) => (stop.aborted ? done(undefined) : stop.addEventListener('abort', done, { once: true })));
  let written = true;
  try {
    await mock.close();
    const report = mock.proxyReport?.();
    if (report && options.report) writeFileSync(options.report, `${JSON.stringify(report, null, 2)}\n`);
    if (report && junit) writeFileSync(junit, proxyJunit(report));
  } catch (error) {
    // The report's folder was there at start; it may have gone, or the disk filled, since.
    log.err(`the report was not written: ${message(error)}`);
    written = false;
  }
  const [code, line] = args.flag('fail-on-violation') ? verdict(counts) : [0, ''];
  if (line) log.err(line);
  return code || (written ? 0 : 1);
}
