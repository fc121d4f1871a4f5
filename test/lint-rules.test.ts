// `npm run lint` holds the code to its rules: Biome, with the project's own biome.json, refuses a
// badly formatted line, `==` and an unused function in a file as a developer would add it. The
// file is checked in a scratch folder with a copy of the configuration, so that the lint which
// `npm test` runs beside the suites never sees it.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIOME = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url));
const CONFIG = fileURLToPath(new URL('../biome.json', import.meta.url));
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
});
