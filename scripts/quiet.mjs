// Runs a development tool (`node scripts/quiet.mjs redocly lint`) and passes on everything it
// prints but the notices listed here, which every run on Node 20 prints and which say nothing about
// the project: a green `npm test` then has no line a newcomer reads as a failure. Its exit status
// is the tool's. docs/development.md says which notices these are.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Lines dropped as they are, each a notice about the toolchain, not about this project. */
const NOTICES = [
  // tsdown 0.21 on Node 20 (the project supports Node >= 20.19).
  /^\[tsdown\] Node\.js v\S+ is deprecated\. Support will be removed in the next minor release\./,
  // rolldown-plugin-dts, for the declarations built with TypeScript 7's tsgo.
  /^The `tsgo` option is experimental and may change in the future\.$/,
];

/** A box of lines dropped whole when one of its lines matches: Redocly CLI's Node 20 banner. */
const BOXES = [/Node\.js 20 support is ending/];

function filter(input, output) {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let box;
  let afterBox = false;
  lines.on('line', (line) => {
    const trimmed = line.trim();
    if (box) {
      box.push(line);
      if (trimmed.startsWith('╚')) {
        const dropped = box.some((each) => BOXES.some((notice) => notice.test(each)));
        if (!dropped) output.write(`${box.join('\n')}\n`);
        afterBox = dropped;
        box = undefined;
      }
      return;
    }
    if (trimmed.startsWith('╔')) {
      box = [line];
      return;
    }
    // The blank line the banner leaves under itself.
    if (afterBox && trimmed === '') {
      afterBox = false;
      return;
    }
    afterBox = false;
    if (NOTICES.some((notice) => notice.test(trimmed))) return;
    output.write(`${line}\n`);
  });
  return new Promise((done) =>
    lines.once('close', () => {
      if (box) output.write(`${box.join('\n')}\n`);
      done();
    }),
  );
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/quiet.mjs <command> [args…]\n');
  process.exit(2);
}
// npm run puts node_modules/.bin on PATH, so the tools resolve as in the script they replace.
// On Windows the tools are .cmd files, which only a shell runs.
const child = spawn(command, args, { stdio: ['inherit', 'pipe', 'pipe'], shell: process.platform === 'win32' });
const piped = Promise.all([filter(child.stdout, process.stdout), filter(child.stderr, process.stderr)]);
child.once('error', (error) => {
  process.stderr.write(`${command}: ${error.message}\n`);
  process.exit(127);
});
child.once('close', async (code, signal) => {
  await piped;
  process.exit(code ?? (signal ? 128 : 1));
});
