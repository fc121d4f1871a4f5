// One version for the workspace: the mock package carries the client's version and depends on
// exactly it, in its package.json and in the lockfile, or `npm ci` looks for that client version in
// the registry. `npm version`'s `version` script (scripts/version-mock.mjs) keeps them so; the
// whole of `npm version minor` and `npm ci` after it runs in test/package/clone.test.ts.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FILES = ['package.json', 'mock/package.json', 'package-lock.json', 'scripts/version-mock.mjs'];

interface Manifests {
  client: { version: string; scripts: Record<string, string> };
  mock: { version: string; dependencies: Record<string, string> };
  lock: { version: string; packages: Record<string, { version: string; dependencies?: Record<string, string> }> };
}

async function manifests(root: string): Promise<Manifests> {
  const read = async (file: string) => JSON.parse(await readFile(join(root, file), 'utf8'));
  return {
    client: await read('package.json'),
    mock: await read('mock/package.json'),
    lock: await read('package-lock.json'),
  };
}

/** Every place the workspace's version is written. */
const versions = ({ client, mock, lock }: Manifests) => [
  client.version,
  mock.version,
  mock.dependencies['gitea-contract'],
  lock.version,
  lock.packages['']!.version,
  lock.packages.mock!.version,
  lock.packages.mock!.dependencies!['gitea-contract'],
];

let scratch: string | undefined;
afterAll(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));

describe('one version for the workspace', () => {
  it('the client, the mock, its dependency on the client and the lockfile all say the same', async () => {
    const found = await manifests(ROOT);
    expect(new Set(versions(found))).toEqual(new Set([found.client.version]));
    expect(found.client.scripts.version).toBe('node scripts/version-mock.mjs');
  });

  it("npm version's version script moves the mock to the version npm gave the client", async () => {
    scratch = await mkdtemp(join(tmpdir(), 'workspace-version-'));
    await mkdir(join(scratch, 'mock'));
    await mkdir(join(scratch, 'scripts'));
    for (const file of FILES) await cp(join(ROOT, file), join(scratch, file));
    // What npm version has done when the script runs: the root's version, in package.json and the lockfile.
    const before = await manifests(scratch);
    const next = '7.8.9';
    before.lock.version = before.lock.packages['']!.version = next;
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ ...before.client, version: next }, null, 2));
    await writeFile(join(scratch, 'package-lock.json'), JSON.stringify(before.lock, null, 2));
    // Outside a git checkout, as with --no-git-tag-version: nothing to stage.
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/version-mock.mjs'], { cwd: scratch });
    expect(stdout).toBe(`gitea-mock follows: ${next}, depending on gitea-contract ${next}\n`);
    const after = await manifests(scratch);
    expect(new Set(versions(after))).toEqual(new Set([next]));
    // Nothing else of the mock's manifest or of the lockfile moves.
    expect({ ...after.mock, version: '', dependencies: { ...after.mock.dependencies, 'gitea-contract': '' } }).toEqual({
      ...before.mock,
      version: '',
      dependencies: { ...before.mock.dependencies, 'gitea-contract': '' },
    });
    expect(Object.keys(after.lock.packages)).toEqual(Object.keys(before.lock.packages));
  });
});
