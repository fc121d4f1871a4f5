// The `gitea-mock trigger <event>` command: asks a running sandbox to fire one event in GITEA_TOKEN's world, and prints the deliveries it queued.
import { httpUrl, type Io, logger, parseCommand, usage } from '../common/options.js';
import { usageError } from '../common/refusal.js';
import type { DeliveryRecord } from '../webhooks/deliveries.js';

const TRIGGER_USAGE = usage(
  'trigger',
  'gitea-mock trigger <event> --repo <owner/name> [options]',
  `
Fires a webhook event in a running sandbox (gitea-mock sandbox), in the world of the token in
GITEA_TOKEN: the sandbox builds the payload from that world and sends it, signed, to the hooks
that take the event and to the system hooks. <event> is an event type, as X-Gitea-Event-Type
names it (push, issues, issue_comment, pull_request, pull_request_review_approved, release …).
Prints the deliveries queued; exits 0 when the sandbox took the event, 1 when it refused it or
could not be reached, 2 for a usage error.`,
);

function parseTriggerOptions(argv: string[], env: NodeJS.ProcessEnv) {
  const args = parseCommand('trigger', argv);
  if (args.help) return undefined;
  const [event, extra] = args.positionals;
  if (event === undefined || extra !== undefined) throw usageError('give one event type, such as push');
  const repository = args.text('repo');
  if (repository === undefined) throw usageError('--repo owner/name is required');
  const url = args.text('url')!;
  const { origin } = httpUrl(url, `--url ${url}: give the sandbox's http or https URL`);
  const token = env.GITEA_TOKEN ?? '';
  if (token === '') throw usageError('set GITEA_TOKEN to the token of the sandbox world to fire the event in');
  return { event, repository, action: args.text('action'), origin, token };
}

export async function triggerCommand(args: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const log = logger(io, 'gitea-mock trigger');
  const options = await log.options(TRIGGER_USAGE, () => parseTriggerOptions(args, env));
  if (typeof options === 'number') return options;
  const { event, repository, action, origin, token } = options;
  const answer = await fetch(`${origin}/__sandbox/trigger`, {
    method: 'POST',
    headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ event, repository, action }),
    signal: AbortSignal.timeout(30_000),
  }).catch((error: Error) => void log.err(`${origin} could not be reached (${error.cause ?? error.message})`));
  if (!answer) return 1;
  const text = await answer.text();
  // Not JSON is not the sandbox: said below with the status.
  const body: { deliveries?: DeliveryRecord[]; message?: string } = await new Response(text).json().catch(() => ({}));
  if (answer.status !== 201 || !Array.isArray(body.deliveries)) {
    log.err(
      `${answer.status} ${body.message ?? (answer.status === 404 ? `no sandbox at ${origin} (run gitea-mock sandbox)` : text.slice(0, 200))}`,
    );
    return 1;
  }
  const what = `${event}${action === undefined ? '' : ` ${action}`} in ${repository}`;
  if (body.deliveries.length === 0) log.plain(`${what}: no hook takes it; nothing queued`);
  for (const { id, type, action, hook, url, state } of body.deliveries)
    log.plain(`${id} ${type} ${action || '-'} to hook ${hook.id} (${hook.target}) ${url}: ${state}`);
  return 0;
}
