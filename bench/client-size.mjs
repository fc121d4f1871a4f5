// Client size as a browser app pays for it: each entry bundled by rolldown with every dependency
// inlined (nothing external), minified, then gzip level 9. The baselines are bundled the same way
// in the same run: openapi-fetch alone (the floor we build on), gitea-js and @octokit/core.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rolldown } from 'rolldown';
import { ratio, ROOT } from './support.mjs';

const GOAL = 4096; // bytes, min+gzip
const OURS = 'gitea-contract (every helper)';
const ENTRIES = {
  [OURS]: `export * from ${JSON.stringify(join(ROOT, 'dist/index.js'))};`,
  'openapi-fetch alone': `export { default } from 'openapi-fetch';`,
  'gitea-js': `export * from 'gitea-js';`,
  '@octokit/core': `export * from '@octokit/core';`,
};

async function measure(dir, name, code) {
  const input = join(dir, `${Object.keys(ENTRIES).indexOf(name)}.mjs`);
  await writeFile(input, code);
  // The entry sits in a temporary directory, so bare specifiers are looked up in the project's
  // node_modules; keeping them bare lets rolldown pick each package's browser/ESM build.
  const bundle = await rolldown({ input, platform: 'browser', logLevel: 'silent', resolve: { modules: [join(ROOT, 'node_modules'), 'node_modules'] } });
  const { output } = await bundle.generate({ format: 'esm', minify: true });
  await bundle.close();
  const [chunk] = output;
  const min = Buffer.byteLength(chunk.code);
  return { min, gzip: gzipSync(chunk.code, { level: 9 }).length, modules: chunk.moduleIds.length };
}

export async function benchClientSize() {
  const dir = await mkdtemp(join(tmpdir(), 'client-size-'));
  const sizes = {};
  try {
    for (const [name, code] of Object.entries(ENTRIES)) sizes[name] = await measure(dir, name, code);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ours = sizes[OURS];
  console.log('\n## Client size, bundled for the browser with its dependencies, minified, gzip -9');
  console.log(`${'bundle'.padEnd(31)} ${'minified'.padStart(9)} ${'min+gzip'.padStart(9)}   ratio to gitea-contract (min, min+gzip)   modules`);
  for (const [name, s] of Object.entries(sizes)) {
    console.log(`${name.padEnd(31)} ${String(s.min).padStart(9)} ${String(s.gzip).padStart(9)}   ${ratio(s.min, ours.min)}, ${ratio(s.gzip, ours.gzip)}${String(s.modules).padStart(25)}`);
  }
  const met = ours.gzip <= GOAL;
  console.log(`gitea-contract: ${ours.gzip} bytes min+gzip, goal <= ${GOAL}: ${met ? 'met' : 'NOT met'}`);
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchClientSize();
