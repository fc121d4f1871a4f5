// The webhook receiver's command line: `gitea-mock webhooks [options]`, from the commands' table
// (common/options.ts). A wrong option is a usage error (exit 2), told before anything listens.
import { httpUrl, parseCommand, usage } from '../common/options.js';
import { usageError } from '../common/refusal.js';

export const RECEIVER_USAGE = usage(
  'webhooks',
  'GITEA_WEBHOOK_SECRET=… gitea-mock webhooks [options]',
  `
Receives webhook deliveries (point a Gitea hook at it), checks each against the contract's
webhooks (headers, signatures with the hook's secret from GITEA_WEBHOOK_SECRET, payload), prints
a line per delivery and, when stopped, exits 2 if none of the contract was received, 1 if any
broke the contract or the --forward app refused one (answered other than 2xx, or could not be
reached), 0 otherwise.`,
);

export type ReceiverOptions = NonNullable<ReturnType<typeof parseReceiverOptions>>;

/** The options, or undefined for `--help`. */
export function parseReceiverOptions(argv: string[], env: NodeJS.ProcessEnv) {
  const args = parseCommand('webhooks', argv);
  if (args.positionals.length > 0) throw usageError('gitea-mock webhooks takes options only');
  if (args.help) return undefined;
  const forward = args.text('forward');
  return {
    port: args.port(env),
    host: args.text('host')!,
    secret: env.GITEA_WEBHOOK_SECRET || undefined,
    forward:
      forward === undefined
        ? undefined
        : httpUrl(forward, `--forward ${forward}: give an http or https URL of your app`),
    report: args.file('report'),
    junit: args.file('junit'),
    quiet: args.flag('quiet'),
  };
}
