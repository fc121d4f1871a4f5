// The webhook receiver's command line: `gitea-mock webhooks [options]`, from the commands' table
// (common/options.ts). A wrong option is a usage error (exit 2), told before anything listens.
import { DEFAULTS, httpUrl, outputFile, parseCommand, port, usage } from '../common/options.js';
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
  const { values, positionals } = parseCommand('webhooks', args);
  if (positionals.length > 0) throw usageError('gitea-mock webhooks takes options only');
  if (values.help) return undefined;
  const forward = values.forward as string | undefined;
  return {
    port: port(values, env, 'webhooks'),
    host: (values.host as string | undefined) ?? DEFAULTS.host,
    secret: env.GITEA_WEBHOOK_SECRET || undefined,
    forward:
      forward === undefined
        ? undefined
        : httpUrl(forward, `--forward ${forward}: give an http or https URL of your app`),
    report: outputFile(values, 'report'),
    junit: outputFile(values, 'junit'),
    quiet: values.quiet === true,
  };
}
