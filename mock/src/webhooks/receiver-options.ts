// The webhook receiver's command line: `gitea-mock webhooks [options]`. A wrong option is a usage
// error (exit 2), told before anything listens.
import { parseArgs } from 'node:util';
import { outputFileProblem } from '../common/output-file.js';
import { usageError } from '../common/refusal.js';

export const RECEIVER_USAGE = `Usage: gitea-mock webhooks [options]

Receives webhook deliveries (point a Gitea hook at it), checks each against the contract's
webhooks (headers, signatures, payload), prints a line per delivery and, when stopped, exits
2 if none of the contract was received, 1 if any broke the contract or the --forward app
refused one (answered other than 2xx, or could not be reached), 0 otherwise.

  -p, --port <n>        port to listen on (default: $PORT or 4011; 0 picks a free one)
  -h, --host <addr>     address to listen on (default: 127.0.0.1)
      --secret <s>      the hook's secret, to check the signatures (or GITEA_WEBHOOK_SECRET,
                        which keeps it out of the command line)
      --forward <url>   send each delivery on to your app at this URL (its origin only) and
                        answer with its answer
      --report <file>   write a JSON report of the deliveries when stopped
      --junit <file>    write the results as JUnit XML when stopped, a test case per delivery
  -q, --quiet           print only the deliveries that break the contract
      --help
`;

export interface ReceiverOptions {
  port: number;
  host: string;
  secret: string | undefined;
  forward: URL | undefined;
  report: string | undefined;
  junit: string | undefined;
  quiet: boolean;
}

/** The options, or undefined for `--help`. */
export function parseReceiverOptions(args: string[], env: NodeJS.ProcessEnv): ReceiverOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string', short: 'p' },
        host: { type: 'string', short: 'h' },
        secret: { type: 'string' },
        forward: { type: 'string' },
        report: { type: 'string' },
        junit: { type: 'string' },
        quiet: { type: 'boolean', short: 'q', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw usageError((error as Error).message);
  }
  if (values.help) return undefined;
  const portText = values.port ?? env.PORT ?? '4011';
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw usageError(`invalid port "${portText}"`);
  const secret = values.secret ?? (env.GITEA_WEBHOOK_SECRET || undefined);
  if (secret === '') throw usageError('--secret takes a secret that is not empty');
  let forward: URL | undefined;
  if (values.forward !== undefined) {
    forward = URL.canParse(values.forward) ? new URL(values.forward) : undefined;
    if (!forward || !/^https?:$/.test(forward.protocol))
      throw usageError(`--forward ${values.forward}: give an http or https URL of your app`);
  }
  for (const [flag, file] of [
    ['--report', values.report],
    ['--junit', values.junit],
  ] as const) {
    const problem = file === undefined ? undefined : outputFileProblem(file);
    if (problem) throw usageError(`${flag} ${file}: ${problem}`);
  }
  return {
    port: Number(portText),
    host: values.host ?? '127.0.0.1',
    secret,
    forward,
    report: values.report,
    junit: values.junit,
    quiet: values.quiet,
  };
}
