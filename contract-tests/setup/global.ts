// Builds dist/ and mock/dist/ if they are stale, then starts the built mock (mock/dist/server.mjs,
// what `npm start` and `npx gitea-mock` run) in-process on a free port, for every contract suite:
// a change the bundler makes to the shipped code cannot hide from them. Afterwards prints which
// documented responses the suites exercised.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { coverageTable } from '../support/coverage.js';

const run = promisify(execFile);

declare module 'vitest' {
  interface ProvidedContext {
    mockBaseUrl: string;
    coverageDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The suites that run the built bins (gitea-mock, live mode) need dist/ from this source;
  // after `npm test`'s pretest build it is current and this is a few file stats.
  await run(process.execPath, [fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url))]);
  const built = fileURLToPath(new URL('../../mock/dist/server.mjs', import.meta.url));
  const { startMockServer } = (await import(built)) as typeof import('../../mock/src/server.js');
  const mock = await startMockServer({ port: 0 });
  const coverageDir = await mkdtemp(join(tmpdir(), 'gitea-contract-coverage-'));
  project.provide('mockBaseUrl', mock.baseUrl);
  project.provide('coverageDir', coverageDir);
  return async () => {
    await mock.close();
    const exercised = new Set<string>();
    for (const file of await readdir(coverageDir)) {
      for (const entry of JSON.parse(await readFile(join(coverageDir, file), 'utf8')) as string[]) exercised.add(entry);
    }
    await rm(coverageDir, { recursive: true, force: true });
    // Only a run of the contract suites reports; a run of other files leaves nothing behind.
    if (exercised.size > 0) console.log(coverageTable(exercised));
  };
}
