// Runs `redocly diff` on two texts of the document, with the diff rules of redocly-diff.yaml (with
// redocly.yaml alone it passes anything, a renamed field included), and hands back its JSON
// report. For `npm run check:breaking` and its test.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const DIFF_CONFIG = fileURLToPath(new URL('../redocly-diff.yaml', import.meta.url));

/**
 * The first `$ref` of a parsed document that points outside it, or undefined. redocly diff
 * resolves every `$ref`: one naming a URL would be fetched, and one naming a file would be read and
 * copied into the report, so a document under review must not carry any.
 */
function outsideRef(doc) {
  const stack = [doc];
  const seen = new Set();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) return node.$ref;
    stack.push(...Object.values(node));
  }
  return undefined;
}

/**
 * redocly diff's JSON report on `baseText` against `revisionText`; rejects, with the end of its
 * output, when it fails, and before running it when either text has a `$ref` outside itself.
 */
export async function redoclyDiff(baseText, revisionText) {
  for (const [which, text] of [
    ['the base', baseText],
    ['the revision', revisionText],
  ]) {
    const ref = outsideRef(parse(text, { maxAliasCount: -1 }));
    if (ref !== undefined)
      throw new Error(
        `${which} has a $ref outside the document (${JSON.stringify(ref.slice(0, 100))}): the comparison reads no other file and fetches nothing`,
      );
  }
  const require = createRequire(import.meta.url);
  const cliPackage = require.resolve('@redocly/cli/package.json');
  const { bin } = JSON.parse(readFileSync(cliPackage, 'utf8'));
  const cli = join(dirname(cliPackage), typeof bin === 'string' ? bin : (bin.redocly ?? Object.values(bin)[0]));
  const folder = await mkdtemp(join(tmpdir(), 'check-breaking-'));
  try {
    const [baseFile, revisionFile, output] = ['base-openapi.yaml', 'openapi.yaml', 'diff.json'].map((name) =>
      join(folder, name),
    );
    await Promise.all([writeFile(baseFile, baseText), writeFile(revisionFile, revisionText)]);
    const args = [
      cli,
      'diff',
      baseFile,
      revisionFile,
      '--config',
      DIFF_CONFIG,
      '--lint-config',
      'off',
      '--format',
      'json',
      '--output',
      output,
      '--fail-on',
      'none',
    ];
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' };
    await new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        args,
        { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) return resolve(undefined);
          reject(
            new Error(
              `redocly diff failed (exit ${error.code ?? error.signal}):\n${(stderr || stdout).trim().split('\n').slice(-15).join('\n')}`,
            ),
          );
        },
      );
    });
    return JSON.parse(await readFile(output, 'utf8'));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
