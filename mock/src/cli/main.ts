#!/usr/bin/env node
// The `gitea-mock` bin: a command per mode, each loaded only when asked for, each resolving with the exit code.
const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
};
const [command, ...args] = process.argv.slice(2);
/** Aborts on SIGINT or SIGTERM: a serving command stops cleanly. */
const signalled = (): AbortSignal => {
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  return stop.signal;
};
let code: number;
if (command === 'verify') code = await (await import('../live/verify.js')).verify(args, process.env, io);
else if (command === 'webhooks')
  code = await (await import('../webhooks/receiver.js')).receiveWebhooks(args, process.env, io);
else if (command === 'trigger') code = await (await import('./trigger.js')).triggerCommand(args, process.env, io);
else if (command === 'postgres')
  code = await (await import('./postgres.js')).postgresCommand(args, process.env, io, signalled());
else code = await (await import('./serve.js')).serve(process.argv.slice(2), process.env, io, signalled());
// At once: a server that keeps its connections open must not hold the process.
process.exit(code);
