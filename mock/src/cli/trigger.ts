// The `gitea-mock trigger <event>` command: asks a running sandbox (`POST /__sandbox/trigger`) to
// fire one event in the world of the credential in GITEA_TOKEN, and prints the deliveries it
// queued. Exit 0 when the sandbox took it, 1 when it refused or could not be reached, 2 for a
// usage error.
import { parseArgs } from 'node:util';
import { Refusal, usageError } from '../common/refusal.js';
import type { DeliveryRecord } from '../webhooks/deliveries.js';

const TRIGGER_USAGE = `Usage: gitea-mock trigger <event> --repo <owner/name> [options]

Fires a webhook event in a running sandbox (gitea-mock --sandbox), in the world of the token in
GITEA_TOKEN: the sandbox builds the payload from that world and sends it, signed, to the hooks
that take the event and to the system hooks. Prints the deliveries queued; exits 0 when the
sandbox took the event, 1 when it refused it or could not be reached, 2 for a usage error.

  <event>              an event type, as X-Gitea-Event-Type names it (push, issues,
                       issue_comment, pull_request, pull_request_review_approved, release …)
      --repo <o/n>     the repository it happens in, such as acme/rocket
      --action <a>     the event's action (opened, created, published …; default: the
                       document's example's); push, create, delete, fork and status have none
      --url <url>      the sandbox (default: http://127.0.0.1:4010)
      --help
`;

interface TriggerOptions {
  event: string;
  repository: string;
  action: string | undefined;
  origin: string;
  token: string;
}

/** The options, or undefined for `--help`. */
function parseTriggerOptions(args: string[], env: NodeJS.ProcessEnv): TriggerOptions | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        repo: { type: 'string' },
        action: { type: 'string' },
        url: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return undefined;
  if (positionals.length !== 1) throw usageError('give one event type, such as push');
  if (values.repo === undefined) throw usageError('--repo owner/name is required');
  const url = values.url ?? 'http://127.0.0.1:4010';
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw usageError(`--url ${url}: give the sandbox's http or https URL`);
  const token = env.GITEA_TOKEN ?? '';
  if (token === '') throw usageError('set GITEA_TOKEN to the token of the sandbox world to fire the event in');
  return { event: positionals[0]!, repository: values.repo, action: values.action, origin: new URL(url).origin, token };
}

/** Runs the command; resolves with its exit code. */
export async function triggerCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: { stdout(text: string): void; stderr(text: string): void },
): Promise<number> {
  let options: TriggerOptions | undefined;
  try {
    options = parseTriggerOptions(args, env);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    io.stderr(`gitea-mock trigger: ${error.message}\n\n${TRIGGER_USAGE}`);
    return error.status;
  }
  if (!options) {
    io.stdout(TRIGGER_USAGE);
    return 0;
  }
  const { event, repository, action, origin, token } = options;
  let answer: Response;
  try {
    answer = await fetch(`${origin}/__sandbox/trigger`, {
      method: 'POST',
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ event, repository, ...(action === undefined ? {} : { action }) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    io.stderr(
      `gitea-mock trigger: ${origin} could not be reached (${(error as Error).cause ?? (error as Error).message})\n`,
    );
    return 1;
  }
  const text = await answer.text();
  let body: { deliveries?: DeliveryRecord[]; message?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not the sandbox: said below with the status.
  }
  if (answer.status !== 201 || !Array.isArray(body.deliveries)) {
    io.stderr(
      `gitea-mock trigger: ${answer.status} ${body.message ?? (answer.status === 404 ? `no sandbox at ${origin} (run gitea-mock --sandbox)` : text.slice(0, 200))}\n`,
    );
    return 1;
  }
  const what = `${event}${action === undefined ? '' : ` ${action}`} in ${repository}`;
  if (body.deliveries.length === 0) io.stdout(`${what}: no hook takes it; nothing queued\n`);
  for (const delivery of body.deliveries)
    io.stdout(
      `${delivery.id} ${delivery.type} ${delivery.action || '-'} to hook ${delivery.hook.id} (${delivery.hook.target}) ${delivery.url}: ${delivery.state}\n`,
    );
  return 0;
}
