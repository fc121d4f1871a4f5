// scripts/quiet.mjs drops the toolchain's known notices and nothing else: a tool's own lines, a
// box that is not the Node 20 banner and its exit status all pass.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const QUIET = fileURLToPath(new URL('../scripts/quiet.mjs', import.meta.url));

/** Runs a Node program under quiet.mjs: its exit code and what passed through. */
function quiet(program: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [QUIET, process.execPath, '-e', program], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

const BANNER = [
  '    ╔════════════════════════════════════════╗',
  '    ║  Deprecation warning: Node.js 20 support is ending  ║',
  '    ╚════════════════════════════════════════╝',
  '',
].join('\n');

describe('scripts/quiet.mjs', () => {
  it("drops Redocly's Node 20 banner and the tsdown and tsgo notices, keeping the tool's lines and status", async () => {
    const program = `
      console.error(${JSON.stringify(BANNER)});
      console.error('validating openapi.yaml…');
      console.warn('[tsdown] Node.js v20.20.2 is deprecated. Support will be removed in the next minor release. Please upgrade to Node.js v22.18.0 or later.');
      console.warn('The \`tsgo\` option is experimental and may change in the future.');
      console.log('✔ Build complete');
      console.error('openapi.yaml: 1 error');
      process.exit(3);`;
    const result = await quiet(program);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('✔ Build complete\n');
    expect(result.stderr).toBe('validating openapi.yaml…\nopenapi.yaml: 1 error\n');
  });

  it('passes any other box and any other warning as they are', async () => {
    const box = '╔══╗\n║ a real warning ║\n╚══╝';
    const result = await quiet(`console.error(${JSON.stringify(box)}); console.warn('[tsdown] something else');`);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`${box}\n[tsdown] something else\n`);
  });
});
