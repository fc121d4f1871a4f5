// `npm run lint` holds the code to its rules: Biome, with the project's own biome.json, refuses a
// badly formatted line, `==` and an unused function in a file as a developer would add it, and
// knip an export nothing imports. Each file is checked in a scratch folder with a copy of the
// configuration, so that the lint which `npm test` runs beside the suites never sees it.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIOME = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url));
const KNIP = fileURLToPath(new URL('../node_modules/knip/bin/knip.js', import.meta.url));
const CONFIG = fileURLToPath(new URL('../biome.json', import.meta.url));
const KNIP_CONFIG = fileURLToPath(new URL('../knip.json', import.meta.url));
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'gitea-contract-lint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The rules Biome finds broken in `code` as `src/planted.ts`, `format` for its formatting; empty when it passes. */
async function findings(code: string): Promise<string[]> {
  const folder = mkdtempSync(join(scratch, 'project-'));
  const config = JSON.parse(readFileSync(CONFIG, 'utf8')) as { $schema?: string; vcs?: { enabled?: boolean } };
  delete config.$schema;
  config.vcs = { ...config.vcs, enabled: false };
  writeFileSync(join(folder, 'biome.json'), JSON.stringify(config));
  mkdirSync(join(folder, 'src'));
  writeFileSync(join(folder, 'src/planted.ts'), code);
  try {
    await run(process.execPath, [BIOME, 'ci', '--colors=off', 'src'], { cwd: folder });
    return [];
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    const found = `${stdout}\n${stderr}`.matchAll(/lint\/\w+\/(\w+)|(File content differs from formatting)/g);
    return [...new Set([...found].map((match) => match[1] ?? 'format'))];
  }
}

describe('npm run lint', () => {
  it('passes a file written as the formatter writes it', async () => {
    expect(await findings('export const answer = (a: number): boolean => a === 1;\n')).toEqual([]);
  });

  it('refuses a badly formatted line', async () => {
    expect(await findings('export const answer=(a:number):boolean=>a===1\n')).toEqual(['format']);
  });

  it('refuses ==', async () => {
    expect(await findings('export const answer = (a: number): boolean => a == 1;\n')).toEqual(['noDoubleEquals']);
  });

  it('refuses an unused function', async () => {
    const code = 'function unused(): number {\n  return 1;\n}\n\nexport const one = 1;\n';
    expect(await findings(code)).toEqual(['noUnusedVariables']);
  });

  it('refuses an export nothing imports', async () => {
    const used = 'export const one = 1;\n';
    expect(await unusedExports(used)).toEqual([]);
    expect(await unusedExports(`${used}export const two = 2;\n`)).toEqual(['two']);
  });
});

/**
 * The exports knip finds unused in `helper` as `src/helper.ts` of a package whose entry imports
 * `one` from it, under the project's own rules for its root workspace.
 */
async function unusedExports(helper: string): Promise<string[]> {
  const folder = mkdtempSync(join(scratch, 'package-'));
  const rules = (JSON.parse(readFileSync(KNIP_CONFIG, 'utf8')) as { workspaces: Record<string, { project: string[] }> })
    .workspaces['.']!;
  writeFileSync(join(folder, 'knip.json'), JSON.stringify({ entry: ['src/index.ts'], project: rules.project }));
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'planted', version: '1.0.0', type: 'module' }));
  mkdirSync(join(folder, 'src'));
  writeFileSync(join(folder, 'src/index.ts'), "import { one } from './helper.js';\n\nconsole.log(one);\n");
  writeFileSync(join(folder, 'src/helper.ts'), helper);
  try {
    await run(process.execPath, [KNIP, '--no-progress', '--reporter', 'json'], { cwd: folder });
    return [];
  } catch (error) {
    const { stdout = '' } = error as { stdout?: string };
    const report = JSON.parse(stdout) as { issues: { exports?: { name: string }[] }[] };
    return report.issues.flatMap((issue) => (issue.exports ?? []).map((unused) => unused.name));
  }
}
