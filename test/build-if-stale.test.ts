// `npm start` and the test setup rebuild dist/ only when a source is newer than it: the script run
// as a process in a scratch project with real files and times, and its list of outputs held to
// what the real build writes.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/build-if-stale.mjs');
const run = promisify(execFile);

const { OUTPUTS, SOURCES } = (await import(SCRIPT as string)) as { OUTPUTS: string[]; SOURCES: string[] };

let root: string;

async function put(path: string, seconds: number, text = ''): Promise<void> {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  await utimes(file, seconds, seconds);
}

/** Runs the script of the scratch project; stderr says whether and why it built. */
async function buildIfStale(): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { cwd: root }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
}

/** A stand-in for tsdown that writes every output now, or fails. */
async function fakeTsdown(body: string): Promise<void> {
  await put(
    'node_modules/tsdown/dist/run.mjs',
    1_000,
    `import { mkdirSync, writeFileSync } from 'node:fs';\nimport { dirname } from 'node:path';\n${body}\n`,
  );
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'gitea-contract-build-'));
  await mkdir(join(root, 'scripts'));
  await copyFile(SCRIPT, join(root, 'scripts/build-if-stale.mjs'));
  await utimes(join(root, 'scripts/build-if-stale.mjs'), 1_000, 1_000);
  // It runs tsdown through the runner that drops the toolchain's notices.
  await copyFile(join(ROOT, 'scripts/quiet.mjs'), join(root, 'scripts/quiet.mjs'));
  for (const source of ['src/client.ts', 'generated/api.d.ts', 'mock/src/front/app.ts', 'package.json'])
    await put(source, 1_000);
  for (const output of OUTPUTS) await put(output, 2_000);
  await fakeTsdown(
    `for (const out of ${JSON.stringify(OUTPUTS)}) { mkdirSync(dirname(out), { recursive: true }); writeFileSync(out, 'built'); }`,
  );
  // Creating files touched their folders; a folder's time counts as a source's too.
  for (const folder of ['src', 'generated', 'mock', 'mock/src', 'mock/src/front'])
    await utimes(join(root, folder), 1_000, 1_000);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('build-if-stale', () => {
  it('does nothing when every output is newer than every source', async () => {
    expect(await buildIfStale()).toEqual({ code: 0, stderr: '' });
  });

  it('builds when an output is missing, and says which', async () => {
    await rm(join(root, 'mock/dist/cli.mjs'));
    const result = await buildIfStale();
    expect(result.stderr).toBe('build: mock/dist/cli.mjs is missing; building dist/ and mock/dist/\n');
    expect(result.code).toBe(0);
    expect(await buildIfStale()).toEqual({ code: 0, stderr: '' });
  });

  it('builds when a file deep in a source folder is newer than the oldest output', async () => {
    await put('mock/src/front/app.ts', 1_500);
    await utimes(join(root, 'dist/index.js'), 1_400, 1_400);
    expect((await buildIfStale()).stderr).toBe(
      'build: mock/src changed since the last build; building dist/ and mock/dist/\n',
    );
  });

  it('builds when a source file was deleted (its folder changed)', async () => {
    await rm(join(root, 'src/client.ts'));
    expect((await buildIfStale()).stderr).toBe(
      'build: src changed since the last build; building dist/ and mock/dist/\n',
    );
  });

  it('exits non-zero when the build fails', async () => {
    await rm(join(root, 'dist/index.js'));
    await fakeTsdown("process.stderr.write('tsdown: broken\\n'); process.exit(3);");
    const result = await buildIfStale();
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('tsdown: broken');
  });

  it('watches every source the build reads and lists every file the build writes', async () => {
    expect(SOURCES).toEqual(
      expect.arrayContaining([
        'openapi.yaml',
        'src',
        'generated',
        'mock/src',
        'tsdown.config.ts',
        'mock/tsdown.config.ts',
        'package.json',
        'mock/package.json',
      ]),
    );
    // dist/ here was written by `npm run build` (pretest) or the global setup; docs come from
    // `npm run docs` and the profiles from `npm run profiles`.
    const built: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) await walk(path);
        else built.push(relative(ROOT, path));
      }
    };
    await walk(join(ROOT, 'dist'));
    await walk(join(ROOT, 'mock/dist'));
    const code = built.filter(
      (path) => !path.startsWith('dist/docs/') && !path.startsWith('dist/profiles/') && path !== 'dist/openapi.json',
    );
    expect(code.sort()).toEqual([...OUTPUTS].sort());
  });
});
