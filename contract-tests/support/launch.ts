// Runs the built launcher as users do (`node mock/dist/cli.mjs`, `npm start`) and reads its
// start-up line to learn the address. A process launched inside a test stops when the test ends,
// whatever its outcome, unless the suite keeps it for later tests; one launched in a hook is the
// suite's to stop, and any still running when the test process exits stops with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { onTestFinished } from 'vitest';

export interface Launched {
  child: ChildProcess;
  baseUrl: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

const START_LINE = /gitea-mock: \d+ operations on (http:\/\/\S+\/api\/v1) /;

/** Every process group launched and not yet gone, for the exit of the test process. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
});

/** Spawns `command args` (in `cwd`) and resolves once the start-up line names the base URL. */
export function launch(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 20_000,
  cwd?: string,
  /** `false` for a suite that keeps the process for later tests and stops it itself. */
  stopsWithTheTest = true,
): Promise<Launched> {
  // Its own process group, so a signal reaches the server even behind `npm start` or `npx`.
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stopGroup = (signal: NodeJS.Signals): Promise<number | null> => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    }
    return exitOf(child);
  };
  try {
    if (stopsWithTheTest)
      onTestFinished(async () => {
        await stopGroup('SIGTERM');
      });
  } catch {
    // Launched in a hook, outside any test: the suite stops it.
  }
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no start-up line within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = START_LINE.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          baseUrl: match[1],
          output: () => output,
          stop: (signal = 'SIGTERM') => stopGroup(signal),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before starting:\n${output}`));
    });
  });
}
