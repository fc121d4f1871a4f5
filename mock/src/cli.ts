#!/usr/bin/env node
// The `gitea-mock` command: `gitea-mock [options]` serves the mock (serve.ts), `gitea-mock verify
// [options]` runs live mode against a real server (live/verify.ts), `gitea-mock webhooks [options]`
// checks a real server's webhook deliveries (webhooks/receiver.ts). Each is loaded only when asked for.
if (process.argv[2] === 'verify') {
  const { verify } = await import('./live/verify.js');
  const code = await verify(process.argv.slice(3), process.env, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
  // At once: a server that keeps its connections open must not hold the process.
  process.exit(code);
} else if (process.argv[2] === 'webhooks') {
  const { receiveWebhooks } = await import('./webhooks/receiver.js');
  const code = await receiveWebhooks(process.argv.slice(3), process.env, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
  process.exit(code);
} else {
  await import('./serve.js');
}
