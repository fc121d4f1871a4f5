// `gitea-mock webhooks` as users run it (the built bin) on a free port, its address read from its start-up
// line; it stops when the test that started it ends, whatever its outcome.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

const CLI = fileURLToPath(new URL('../../mock/dist/cli.mjs', import.meta.url));

export interface ReceiverBin {
  child: ChildProcess;
  origin: string;
  output(): string;
  /** SIGTERM, then the exit code (again the same code once it has exited). */
  stop(): Promise<number | null>;
}

/** The receiver with `args`, its hooks' secret `secret` in GITEA_WEBHOOK_SECRET. */
export async function startReceiverBin(args: string[], secret = ''): Promise<ReceiverBin> {
  const child = spawn(process.execPath, [CLI, 'webhooks', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GITEA_WEBHOOK_SECRET: secret },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  onTestFinished(async () => {
    await stop();
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /receiving webhook deliveries on (http:\/\/\S+)\//.exec(output);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  return { child, origin, output: () => output, stop };
}
