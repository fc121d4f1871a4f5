// Runs the scenario's entry (main.mjs) in Node (this one, 22 or 24), Deno or Bun as a child process
// of its own and reads the JSON result it prints. Each runtime gets what a user of the package would give it, and no
// more: Deno only network access to the scenario's loopback servers.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ScenarioConfig, ScenarioResult } from '../scenario.mjs';
import { nodeExecutable } from './node-versions.js';
import { runtimeExecutable } from './runtime-binary.js';

export type ProcessRuntime = 'node' | 'node22' | 'node24' | 'deno' | 'bun';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = 'test/runtimes/main.mjs';
/** Far beyond a run's second or two; a runtime that hangs is killed and reported. */
const LIMIT_MS = 30_000;

const running = new Set<ChildProcess>();

/** The command line and environment that run main.mjs in `runtime`. */
async function commandFor(
  runtime: ProcessRuntime,
  config: ScenarioConfig,
  scratch: string,
): Promise<{ command: string; args: string[]; env: NodeJS.ProcessEnv }> {
  const json = JSON.stringify(config);
  if (runtime === 'node') return { command: process.execPath, args: [MAIN, json], env: process.env };
  if (runtime === 'node22' || runtime === 'node24')
    return { command: await nodeExecutable(runtime === 'node22' ? '22' : '24'), args: [MAIN, json], env: process.env };
  if (runtime === 'bun') {
    return {
      command: runtimeExecutable('bun'),
      // --no-install: openapi-fetch comes from node_modules, never fetched on the fly.
      args: ['--no-install', MAIN, json],
      // No transpiler cache in the home folder, no crash reports sent anywhere.
      env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0', DO_NOT_TRACK: '1' },
    };
  }
  const hosts = [config.baseUrl, config.stallUrl, config.echoUrl].map((url) => new URL(url).host);
  return {
    command: runtimeExecutable('deno'),
    args: [
      'run',
      // Exactly the three loopback servers; no file, environment or process access is needed.
      `--allow-net=${hosts.join(',')}`,
      '--no-prompt',
      // As in a Deno project with a package.json: bare imports (dist/index.js's `openapi-fetch`)
      // resolve from the node_modules that npm installed, which Deno reads and never changes.
      // Deno users get the package the same way with `npm install` or `deno install`.
      '--node-modules-dir=manual',
      '--no-remote',
      // No deno.lock written into the checkout.
      '--no-lock',
      MAIN,
      json,
    ],
    // Deno's caches in the suite's scratch folder; no update check against Deno's servers.
    env: { ...process.env, DENO_DIR: scratch, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  };
}

/** Runs the scenario in `runtime`; rejects, saying why, when the runtime gives no result. */
export async function runInProcess(
  runtime: ProcessRuntime,
  config: ScenarioConfig,
  scratch: string,
): Promise<ScenarioResult> {
  const { command, args, env } = await commandFor(runtime, config, scratch);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
  const exit = await new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`could not start ${command}: ${error.message}`));
    child.once('close', (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with ${code}`));
  }).finally(() => {
    clearTimeout(timer);
    running.delete(child);
  });
  const last = stdout.trim().split('\n').pop() ?? '';
  try {
    if (exit === 'exited with 0') return JSON.parse(last) as ScenarioResult;
  } catch {
    // Reported below, with what it printed.
  }
  throw new Error(`${runtime} ${exit} without a result: ${(stderr.trim() || last).slice(-800)}`);
}

/** Kills every runtime still running; for afterAll, whatever happened before. */
export function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
}
