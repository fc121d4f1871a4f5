// What ships never depends on the tests: no module of the client (src/) or of the mock package
// (mock/src/) imports from test/ or contract-tests/, the client imports nothing of the mock, and
// the mock imports the client by its package name (`gitea-contract`, `gitea-contract/internal`),
// as it runs once installed, never by a path into src/. Inside the mock, each folder imports only
// the floors below it, and no function is longer than a reader can hold (150 non-blank lines).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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

describe("the mock's house", () => {
  /** The floor of a file of mock/src: its top folder, or `root` for the composition root's files. */
  const floor = (file: string): string => {
    const parts = relative('mock/src', file).split('/');
    return parts.length > 1 ? parts[0]! : 'root';
  };

  it('no folder imports a folder that imports it, through any path', () => {
    const edges = new Map<string, Set<string>>();
    for (const file of sources('mock/src'))
      for (const target of importsOf(file))
        if (target.startsWith('mock/src/') && floor(target) !== floor(file))
          edges.set(floor(file), (edges.get(floor(file)) ?? new Set()).add(floor(target)));
    expect(edges.size).toBeGreaterThan(5);
    const cycles: string[] = [];
    const walk = (at: string, path: string[]): void => {
      for (const next of edges.get(at) ?? []) {
        if (next === path[0]) cycles.push([...path, next].join(' → '));
        else if (!path.includes(next)) walk(next, [...path, next]);
      }
    };
    for (const start of edges.keys()) walk(start, [start]);
    expect(cycles).toEqual([]);
  });

  it('no function of mock/src is longer than 150 non-blank lines', () => {
    const long: string[] = [];
    for (const file of sources('mock/src').filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const lines = text
            .slice(node.getStart(tree), node.end)
            .split('\n')
            .filter((line) => line.trim() !== '').length;
          const { line } = tree.getLineAndCharacterOfPosition(node.getStart(tree));
          if (lines > 150) long.push(`${file}:${line + 1} (${lines} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(tree);
    }
    expect(long).toEqual([]);
  });
});
