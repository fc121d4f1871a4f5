// The TypeScript blocks of the documents are found, as `npm run test:dist` compiles them against
// the packed packages (test/package/pack.test.ts): here only that the extractor finds each one,
// whole, and understands the marker of a block that is not meant to compile.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documentedBlocks, typeScriptBlocks } from './support/code-blocks.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('the TypeScript blocks of the documents', () => {
  it('are found in the README, docs/ and the mock README, each with code', () => {
    const blocks = documentedBlocks(ROOT);
    const where = blocks.map(({ file }) => file);
    for (const file of ['README.md', 'docs/client.md', 'mock/README.md']) expect(where).toContain(file);
    for (const block of blocks) expect(block.code.trim(), `${block.file}:${block.line}`).not.toBe('');
    // A block left out of the compile says why.
    for (const { file, line, skip } of blocks) if (skip !== undefined) expect(skip, `${file}:${line}`).toMatch(/\w{3}/);
    expect(blocks.some((block) => block.code.includes("from 'gitea-mock/msw'"))).toBe(true);
  });

  it('are taken whole, other languages and marked blocks told apart', () => {
    const markdown = [
      '# Title',
      '```sh',
      'npm install gitea-contract',
      '```',
      '````ts',
      "const fence = '```';",
      '````',
      '<!-- not compiled: a fragment -->',
      '```typescript',
      'gitea.GET(…)',
      '```',
      '```json',
      '{}',
      '```',
    ].join('\n');
    expect(typeScriptBlocks('x.md', markdown)).toEqual([
      { file: 'x.md', line: 5, code: "const fence = '```';" },
      { file: 'x.md', line: 9, code: 'gitea.GET(…)', skip: 'a fragment' },
    ]);
  });
});
