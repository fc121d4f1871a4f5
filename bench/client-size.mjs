// Client size as a browser app pays for it: each entry bundled by rolldown with every dependency
// inlined (nothing external), minified, then gzip level 9. The baselines are bundled the same way
// in the same run: openapi-fetch alone (the floor we build on), gitea-js and @octokit/core.
// Then where the bytes go: the client bundled from its sources with a source map, each byte of
// the minified output traced to its module, and each module's share of the gzip size measured
// as what the whole loses when that module's bytes are taken out. Then two figures for the size
// goal: what an app pays for the imports it typically makes (the rest shaken out), and the floor
// no rewrite of the client's code can go below: openapi-fetch plus the texts the client must carry
// (the messages the tests pin, the operationId table, header names and patterns).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { decode } from '@jridgewell/sourcemap-codec';
import { rolldown } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';
import { ratio, ROOT } from './support.mjs';

const GOAL = 4096; // bytes, min+gzip
const OURS = 'gitea-contract (every helper)';
const ENTRIES = {
  [OURS]: `export * from ${JSON.stringify(join(ROOT, 'dist/index.js'))};`,
  'openapi-fetch alone': `export { default } from 'openapi-fetch';`,
  'gitea-js': `export * from 'gitea-js';`,
  '@octokit/core': `export * from '@octokit/core';`,
};

const gzip = (code) => gzipSync(code, { level: 9 }).length;

async function bundle(input, sourcemap = false, external = []) {
  // Bare specifiers are looked up in the project's node_modules; keeping them bare lets rolldown
  // pick each package's browser/ESM build.
  const build = await rolldown({
    input,
    external,
    platform: 'browser',
    logLevel: 'silent',
    resolve: { modules: [join(ROOT, 'node_modules'), 'node_modules'] },
  });
  const { output } = await build.generate({ format: 'esm', minify: true, sourcemap });
  await build.close();
  return output[0];
}

/** Sizes of `code` bundled as the file `input`. */
async function measure(input, code) {
  await writeFile(input, code);
  const chunk = await bundle(input);
  return { min: Buffer.byteLength(chunk.code), gzip: gzip(chunk.code), modules: chunk.moduleIds.length };
}

/** Bytes of the minified client by source module, from the source map. */
async function breakdown() {
  const chunk = await bundle(join(ROOT, 'src/index.ts'), true);
  const lines = chunk.code.split('\n');
  const owner = lines.map((line) => new Array(line.length).fill(-1));
  decode(chunk.map.mappings).forEach((segments, row) => {
    segments.forEach(([column, source], i) => {
      const end = segments[i + 1]?.[0] ?? lines[row].length;
      if (source !== undefined) owner[row].fill(source, column, end);
    });
  });
  const names = chunk.map.sources.map((source) =>
    relative(ROOT, join(ROOT, 'src', source)).replace(/^node_modules\/([^/]+)\/.*/, '$1 (dependency)'),
  );
  const total = gzip(chunk.code);
  const rows = names.map((name, index) => {
    const without = lines
      .map((line, row) => [...line].filter((_, column) => owner[row][column] !== index).join(''))
      .join('\n');
    const bytes = owner.reduce((sum, row) => sum + row.filter((o) => o === index).length, 0);
    return { name, bytes, share: total - gzip(without) };
  });
  return { total, rows: rows.filter((row) => row.bytes > 0).sort((a, b) => b.share - a.share) };
}

/** Typical imports of an app, each bundled alone with openapi-fetch. */
const IMPORTS = [
  ['createGiteaClient'],
  ['createGiteaClient', 'unwrap', 'paginate'],
  ['unwrap'],
  ['ApiError'],
  ['paginate'],
  ['uploadReleaseAttachment'],
  ['renderMarkdown'],
  ['markNotificationThread'],
  ['verifyWebhookSignature'],
  ['parseWebhook', 'WebhookError'],
];

/** Every string, template part and regular expression of a minified module, as written. */
function textsOf(code) {
  const texts = [];
  const walk = (node) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    if (node.type === 'Literal' && (typeof node.value === 'string' || node.regex)) texts.push(node.raw);
    else if (node.type === 'TemplateElement') texts.push(node.value.raw);
    else if (node.type !== 'ImportDeclaration') Object.values(node).forEach(walk);
  };
  walk(parseAst(code));
  return texts.filter(Boolean);
}

/** The client's texts, and what they add to the gzip size of openapi-fetch alone: joined with no separator, which errs low. */
async function floor(dir) {
  const input = join(dir, 'floor.mjs');
  await writeFile(input, ENTRIES[OURS]);
  const ours = textsOf((await bundle(input, false, ['openapi-fetch'])).code);
  await writeFile(input, ENTRIES['openapi-fetch alone']);
  const base = (await bundle(input)).code;
  return { count: ours.length, chars: ours.join('').length, added: gzip(base + ours.join('')) - gzip(base) };
}

export async function benchClientSize() {
  const dir = await mkdtemp(join(tmpdir(), 'client-size-'));
  const sizes = {};
  const imports = [];
  let texts;
  try {
    for (const [name, code] of Object.entries(ENTRIES)) sizes[name] = await measure(join(dir, 'entry.mjs'), code);
    for (const names of IMPORTS)
      imports.push([
        names.join(' + '),
        await measure(
          join(dir, 'entry.mjs'),
          `export { ${names.join(', ')} } from ${JSON.stringify(join(ROOT, 'dist/index.js'))};`,
        ),
      ]);
    texts = await floor(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ours = sizes[OURS];
  console.log('\n## Client size, bundled for the browser with its dependencies, minified, gzip -9');
  console.log(
    `${'bundle'.padEnd(31)} ${'minified'.padStart(9)} ${'min+gzip'.padStart(9)}   ratio to gitea-contract (min, min+gzip)   modules`,
  );
  for (const [name, s] of Object.entries(sizes)) {
    console.log(
      `${name.padEnd(31)} ${String(s.min).padStart(9)} ${String(s.gzip).padStart(9)}   ${ratio(s.min, ours.min)}, ${ratio(s.gzip, ours.gzip)}${String(s.modules).padStart(25)}`,
    );
  }
  const met = ours.gzip <= GOAL;
  const base = sizes['openapi-fetch alone'].gzip;
  console.log(
    `gitea-contract: ${ours.gzip} bytes min+gzip, goal <= ${GOAL}: ${met ? 'met' : 'NOT met'}; ${ours.gzip - base} bytes above openapi-fetch alone`,
  );
  console.log(
    `floor: the client's ${texts.count} texts (${texts.chars} characters: messages, the operationId table, header names, patterns) add ${texts.added} bytes to openapi-fetch alone, ${base + texts.added} together; under the goal that leaves ${GOAL - base - texts.added} bytes for the code, which adds ${ours.gzip - base - texts.added} today`,
  );

  console.log(
    '\nwhat an app pays for its imports (the rest shaken out, openapi-fetch included where used): minified, min+gzip',
  );
  for (const [name, s] of imports)
    console.log(`  ${name.padEnd(44)} ${String(s.min).padStart(6)} ${String(s.gzip).padStart(6)}`);

  const { total, rows } = await breakdown();
  console.log(
    `\nwhere the bytes go (the client bundled from src/, ${total} bytes min+gzip): per module, its minified bytes, and what the gzip size loses without them`,
  );
  for (const { name, bytes, share } of rows)
    console.log(`  ${name.padEnd(36)} ${String(bytes).padStart(6)} min  ${String(share).padStart(5)} gzip`);
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchClientSize();
