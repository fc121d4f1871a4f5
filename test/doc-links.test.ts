// Every link between the documents lands: the file it names is in the repository, and the anchor
// after `#` is a heading of that file, as GitHub and npm render it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documents } from './support/code-blocks.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FILES = [...documents(ROOT), 'generated/README.md', 'CHANGELOG.md'];

/** The lines of a Markdown text outside its fenced code blocks, with their numbers. */
function prose(markdown: string): { line: number; text: string }[] {
  const lines = markdown.split(/\r?\n/);
  const kept: { line: number; text: string }[] = [];
  let fence: string | undefined;
  lines.forEach((text, at) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence === undefined && marker) fence = marker;
    else if (fence !== undefined && marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length)
      fence = undefined;
    else if (fence === undefined) kept.push({ line: at + 1, text });
  });
  return kept;
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a document's headings; a repeated one gets `-1`, `-2` … as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const { text } of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The relative links of a document (inline code left out), each with its line. */
function links(markdown: string): { line: number; target: string }[] {
  return prose(markdown).flatMap(({ line, text }) =>
    [...text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)]
      .map(([, target]) => ({ line, target: target! }))
      .filter(({ target }) => !/^[a-z]+:/i.test(target)),
  );
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the links between the documents', () => {
  it.for(FILES)('%s: every relative link names a file that is there, and a heading of it', (file) => {
    const broken: string[] = [];
    for (const { line, target } of links(read(file))) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const linked = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      if (!existsSync(join(ROOT, linked))) broken.push(`${file}:${line}: ${target}: no file ${linked}`);
      else if (anchor !== undefined && linked.endsWith('.md') && !anchors(read(linked)).has(anchor))
        broken.push(`${file}:${line}: ${target}: no heading #${anchor} in ${linked}`);
    }
    expect(broken).toEqual([]);
  });

  it('finds headings and links as GitHub reads them', () => {
    const markdown = [
      '# Live mode: `gitea-mock verify` checks your own Gitea',
      '## The tools of `npm run test:dist`',
      '```md',
      '## Not a heading',
      '[not a link](nowhere.md)',
      '```',
      '## Proxy',
      '### Proxy',
      'See [the proxy](#proxy-1), [the docs](../docs/proxy.md#the-report) and `[code](x.md)`.',
    ].join('\n');
    expect([...anchors(markdown)]).toEqual([
      'live-mode-gitea-mock-verify-checks-your-own-gitea',
      'the-tools-of-npm-run-testdist',
      'proxy',
      'proxy-1',
    ]);
    expect(links(markdown)).toEqual([
      { line: 9, target: '#proxy-1' },
      { line: 9, target: '../docs/proxy.md#the-report' },
    ]);
  });
});
