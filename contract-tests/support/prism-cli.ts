// Starts `prism mock` from the CLI, exactly as a user runs `npx prism mock openapi.yaml`, on a
// free loopback port, and stops it again.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/free-port.mjs';

const PRISM_BIN = fileURLToPath(new URL('../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));
const DOCUMENT = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

export interface PrismCli {
  origin: string;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/**
 * Spawns Prism with `extraArgs` and resolves once it answers HTTP; rejects if it dies first, or
 * stops it and rejects when it has not answered within `timeoutMs`: a start takes a second and a
 * half on a quiet machine and ten times that beside two CPU-bound processes.
 */
export async function startPrismCli(extraArgs: readonly string[] = [], timeoutMs = 90_000): Promise<PrismCli> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [PRISM_BIN, 'mock', DOCUMENT, '--host', '127.0.0.1', '--port', String(port), ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited(child);
  };

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(origin, { signal: AbortSignal.timeout(2_000) });
      return { origin, stop };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await stop();
  throw new Error(`prism did not answer within ${timeoutMs} ms:\n${output}`);
}
