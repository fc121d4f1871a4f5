#!/usr/bin/env node
// The `gitea-mock` command: `gitea-mock [options]` serves the mock (serve.ts), `gitea-mock verify
// [options]` runs live mode against a real server (live/verify.ts), `gitea-mock webhooks [options]`
// checks a real server's webhook deliveries (webhooks/receiver.ts), `gitea-mock trigger <event>`
// fires an event in a running sandbox (trigger-command.ts), `gitea-mock postgres` runs a
// PostgreSQL server for the sandbox (postgres-command.ts). Each is loaded only when asked for.
const output = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
};
if (process.argv[2] === 'verify') {
  const { verify } = await import('../live/verify.js');
  const code = await verify(process.argv.slice(3), process.env, output);
  // At once: a server that keeps its connections open must not hold the process.
  process.exit(code);
} else if (process.argv[2] === 'webhooks') {
  const { receiveWebhooks } = await import('../webhooks/receiver.js');
  const code = await receiveWebhooks(process.argv.slice(3), process.env, output);
  process.exit(code);
} else if (process.argv[2] === 'trigger') {
  const { triggerCommand } = await import('./trigger.js');
  process.exit(await triggerCommand(process.argv.slice(3), process.env, output));
} else if (process.argv[2] === 'postgres') {
  const { postgresCommand } = await import('./postgres.js');
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  const code = await postgresCommand(process.argv.slice(3), process.env, output, stop.signal);
  process.exit(code);
} else {
  await import('./serve.js');
}
