// `npm start` (scripts/start.mjs) and the test setup: runs the build (tsdown) only when a source is newer
// than dist/, so starting the mock on a current checkout costs a few file stats, not a build.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * What the builds read: the client, the generated types, the mock package (with live mode), their
 * configs, and the document, which the mock's build parses into mock/dist/document.json and the
 * MSW handlers' browser build carries as data.
 */
export const SOURCES = [
  'openapi.yaml',
  'src',
  'generated',
  'mock/src',
  'tsdown.config.ts',
  'mock/tsdown.config.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'mock/package.json',
  'package-lock.json',
  // The server profiles, which the mock's build applies to the document with these two scripts.
  'profiles',
  'scripts/profiles.mjs',
  'scripts/overlay.mjs',
];

/** What the two tsdown configs write; test/build-if-stale.test.ts keeps this list equal to it. */
export const OUTPUTS = [
  'dist/index.js',
  'dist/index.cjs',
  'dist/index.d.ts',
  'dist/index.d.cts',
  'dist/internal.js',
  'dist/internal.cjs',
  'dist/internal.d.ts',
  'dist/internal.d.cts',
  'mock/dist/allowed-hosts.mjs',
  'mock/dist/allowed-hosts2.mjs',
  'mock/dist/answering-node.mjs',
  'mock/dist/answering.d.mts',
  'mock/dist/app.mjs',
  'mock/dist/attempt.mjs',
  'mock/dist/bytes.mjs',
  'mock/dist/cli.d.mts',
  'mock/dist/cli.mjs',
  'mock/dist/conditions.mjs',
  'mock/dist/document-file.mjs',
  'mock/dist/document.json',
  'mock/dist/document.mjs',
  'mock/dist/errors.mjs',
  'mock/dist/exchange-report.mjs',
  'mock/dist/http-operations.mjs',
  'mock/dist/junit.mjs',
  'mock/dist/markdown-render.d.mts',
  'mock/dist/markdown-render.mjs',
  'mock/dist/markdown-worker.d.mts',
  'mock/dist/markdown-worker.mjs',
  'mock/dist/msw.browser.licenses.txt',
  'mock/dist/msw.browser.mjs',
  'mock/dist/msw.d.mts',
  'mock/dist/msw.mjs',
  'mock/dist/network-failure.mjs',
  'mock/dist/node-server.mjs',
  'mock/dist/options.mjs',
  'mock/dist/postgres-server.d.mts',
  'mock/dist/postgres-server.mjs',
  'mock/dist/postgres-server2.mjs',
  'mock/dist/postgres-url.mjs',
  'mock/dist/postgres.mjs',
  'mock/dist/profiles/forgejo-11.json',
  'mock/dist/profiles/forgejo-11.operations.json',
  'mock/dist/profiles/forgejo-12.json',
  'mock/dist/profiles/forgejo-12.operations.json',
  'mock/dist/profiles/gitea-1.24.json',
  'mock/dist/profiles/gitea-1.24.operations.json',
  'mock/dist/profiles/gitea-1.25.json',
  'mock/dist/profiles/gitea-1.25.operations.json',
  'mock/dist/profiles/gitea-1.26.json',
  'mock/dist/profiles/gitea-1.26.operations.json',
  'mock/dist/profiles/gitea-1.27.json',
  'mock/dist/profiles/gitea-1.27.operations.json',
  'mock/dist/proxy.mjs',
  'mock/dist/proxy2.mjs',
  'mock/dist/receiver.mjs',
  'mock/dist/redaction.mjs',
  'mock/dist/refusal.mjs',
  'mock/dist/request-target.mjs',
  'mock/dist/schema.mjs',
  'mock/dist/serve.mjs',
  'mock/dist/server.d.mts',
  'mock/dist/server.mjs',
  'mock/dist/store.mjs',
  'mock/dist/transport-node.mjs',
  'mock/dist/trigger.mjs',
  'mock/dist/upstream-server.mjs',
  'mock/dist/verify.mjs',
  'mock/dist/world-check.mjs',
  'mock/dist/world-postgres.mjs',
  'mock/dist/world.mjs',
];

/** Modification time of `path`, or of the newest file below it; -1 when it does not exist. */
function newest(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return -1;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stats.mtimeMs);
}

/** Why dist/ must be rebuilt under `root`, or undefined when it is current. */
export function staleReason(root = ROOT) {
  let oldestOutput = Infinity;
  for (const output of OUTPUTS) {
    const time = newest(join(root, output));
    if (time < 0) return `${output} is missing`;
    oldestOutput = Math.min(oldestOutput, time);
  }
  for (const source of SOURCES) {
    if (newest(join(root, source)) > oldestOutput) return `${source} changed since the last build`;
  }
  return undefined;
}

/** Builds dist/ when it is stale, telling why on stderr; returns the exit status (0: current or built). */
export function buildIfStale(root = ROOT) {
  const reason = staleReason(root);
  if (reason === undefined) return 0;
  process.stderr.write(`build: ${reason}; building dist/ and mock/dist/\n`);
  const tsdown = join(root, 'node_modules/tsdown/dist/run.mjs');
  // The client first: the mock's build reads nothing of it, but a failure is told in that order.
  for (const cwd of [root, join(root, 'mock')]) {
    const quiet = join(root, 'scripts/quiet.mjs');
    const { status, error } = spawnSync(process.execPath, [quiet, process.execPath, tsdown, '--logLevel', 'warn'], {
      cwd,
      stdio: 'inherit',
    });
    if (error) throw error;
    if (status !== 0) return status ?? 1;
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = buildIfStale();
