// What ships never depends on the tests: no module of the client (src/) or of the mock package
// (mock/src/) imports from test/ or contract-tests/, the client imports nothing of the mock, and
// the mock imports the client by its package name (`gitea-contract`, `gitea-contract/internal`),
// as it runs once installed, never by a path into src/.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Where each relative import of `file` leads, relative to the repository. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) =>
    relative(ROOT, resolve(dirname(join(ROOT, file)), match[1]!)),
  );
}

describe('shipped code', () => {
  it.each(['src', 'mock/src'])('%s imports nothing from test/ or contract-tests/', (folder) => {
    const files = sources(folder);
    expect(files.length).toBeGreaterThan(5);
    const leaks = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => /^(test|contract-tests)\//.test(target))
        .map((target) => `${file} → ${target}`),
    );
    expect(leaks).toEqual([]);
  });

  it('the client imports nothing of the mock, nor of Node', () => {
    const leaks = sources('src').flatMap((file) => [
      ...importsOf(file).filter((target) => !target.startsWith('src/') && !target.startsWith('generated/')),
      ...(/from\s*['"]node:/.test(readFileSync(join(ROOT, file), 'utf8')) ? [`${file} → node:`] : []),
    ]);
    expect(leaks).toEqual([]);
  });

  it('the mock imports the client by its package name only', () => {
    const files = sources('mock/src');
    const byPath = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => /^(src|generated)\//.test(target))
        .map((target) => `${file} → ${target}`),
    );
    expect(byPath).toEqual([]);
    const byName = files.filter((file) =>
      /from\s*'gitea-contract(\/internal)?'/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(byName.length).toBeGreaterThan(5);
  });
});
