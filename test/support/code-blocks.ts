// The TypeScript code blocks of the documents a user reads (README.md, docs/*.md, mock/README.md),
// which `npm run test:dist` compiles against the packed packages. A block that is not meant to
// compile says so on the line before its fence: `<!-- not compiled: why -->`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CodeBlock {
  /** The document, relative to the repository, and the line of the opening fence. */
  file: string;
  line: number;
  code: string;
  /** Why the block is not compiled, when its marker says so. */
  skip?: string;
}

/** The documents whose TypeScript blocks are compiled. */
export function documents(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs, 'mock/README.md'];
}

const FENCE = /^(`{3,}|~{3,})\s*([\w-]*)/;
const MARKER = /^<!--\s*not compiled:\s*(.*?)\s*-->\s*$/;
const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx', 'mts']);

/** The TypeScript blocks of one Markdown text. */
export function typeScriptBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, fence, lang] = open;
    // A fence closes with the same character, at least as long, and nothing after it.
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^${fence![0]}{${fence!.length},}\\s*$`).test(lines[end]!)) end++;
    if (TYPESCRIPT.has(lang!.toLowerCase())) {
      const skip = MARKER.exec(lines[i - 1] ?? '')?.[1];
      blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n'), ...(skip ? { skip } : {}) });
    }
    i = end;
  }
  return blocks;
}

/** The TypeScript blocks of every document, in order. */
export function documentedBlocks(root: string): CodeBlock[] {
  return documents(root).flatMap((file) => typeScriptBlocks(file, readFileSync(join(root, file), 'utf8')));
}
