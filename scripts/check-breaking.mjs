// `npm run check:breaking -- [base]`: compares openapi.yaml with its version at a git ref through
// `redocly diff`, with the diff rules of redocly-diff.yaml, and fails on a change that breaks the
// document's users (a field renamed or removed, a new required request field, an enum value
// removed, a type changed …), unless the package's major version went up (the minor before 1.0)
// and CHANGELOG.md names the change. The base is the ref given, else the last release tag `v*`
// reachable from HEAD, else the merge base with main.
//
// The policy (which changes break, their names, the operations they reach, the verdict) is
// scripts/breaking-policy.mjs, pure and tested in-process; this script reads git and runs
// `redocly diff` (scripts/redocly-diff.mjs) for it.
//
// With `--report FILE`, it also writes what it found as JSON for CI to keep: the base, the exit
// code, the lines it printed and `redocly diff`'s changes.
//
// Exit codes: 0 no breaking change, or each one allowed; 1 a breaking change not allowed; 2 nothing
// was compared (no base, an unknown ref, redocly failing, a report that cannot be written).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { judgeChanges } from './breaking-policy.mjs';
import { redoclyDiff } from './redocly-diff.mjs';

const DOCUMENT = 'openapi.yaml';
const CHANGELOG = 'CHANGELOG.md';

const say = (line = '') => process.stdout.write(`${line}\n`);
function stop(code, message) {
  process.stderr.write(`check:breaking: ${message}\n`);
  process.exit(code);
}

/** Runs git in the current folder; its trimmed stdout, or undefined when it fails. */
function git(...args) {
  const result = spawnSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) stop(2, `git cannot be run: ${result.error.message}`);
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** A file of the current folder as it is at `commit`, or undefined when it was not there. */
function fileAt(commit, file) {
  const result = spawnSync('git', ['show', `${commit}:./${file}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return result.status === 0 ? result.stdout : undefined;
}

/** A file of the working tree, or undefined when it is not there. */
function fileNow(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The ref to compare with, its commit, and how it was chosen. */
function chooseBase(given) {
  if (given !== undefined) {
    const commit = git('rev-parse', '--verify', '--quiet', `${given}^{commit}`);
    if (!commit) stop(2, `"${given}" is no git ref or commit here`);
    return { ref: given, commit, why: 'as given' };
  }
  const tag = git('describe', '--tags', '--abbrev=0', '--match', 'v*', 'HEAD');
  if (tag) return { ref: tag, commit: git('rev-parse', `${tag}^{commit}`), why: 'the last release tag' };
  for (const branch of ['main', 'origin/main']) {
    const commit = git('merge-base', 'HEAD', branch);
    if (commit) return { ref: `the merge base with ${branch}`, commit, why: 'no release tag v* yet' };
  }
  stop(
    2,
    'no base to compare with: no release tag v* is reachable from HEAD, and there is no main branch (nor origin/main) to take the merge base with; give one: npm run check:breaking -- <ref>',
  );
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  say('Usage: npm run check:breaking -- [base] [--report FILE]');
  say('');
  say(`Compares ${DOCUMENT} with its version at the git ref <base> (default: the last release tag v*,`);
  say("else the merge base with main) and fails on a breaking change, unless the package's major");
  say(`version went up (the minor before 1.0) and ${CHANGELOG} names each breaking change.`);
  say('--report FILE also writes the result as JSON: the base, the exit code, the lines and the changes.');
  process.exit(0);
}
const reportAt = args.indexOf('--report');
const reportFile = reportAt < 0 ? undefined : args[reportAt + 1];
if (reportAt >= 0) {
  if (reportFile === undefined || reportFile.startsWith('--')) stop(2, '--report needs a file name');
  args.splice(reportAt, 2);
}
if (args.length > 1) stop(2, 'give at most one base ref');
if (git('rev-parse', '--is-inside-work-tree') !== 'true') stop(2, 'not inside a git work tree');

const base = chooseBase(args[0]);
const short = base.commit.slice(0, 7);
say(`check:breaking: ${DOCUMENT} against ${base.ref} (${short}, ${base.why})`);
const baseText = fileAt(base.commit, DOCUMENT);
/** Writes the report, when asked for, and exits with `code`. */
function finish(code, lines, changes) {
  if (reportFile !== undefined) {
    try {
      writeFileSync(
        reportFile,
        `${JSON.stringify({ base: { ref: base.ref, commit: base.commit }, code, lines, changes }, null, 2)}\n`,
      );
    } catch (error) {
      stop(2, `the report cannot be written to ${reportFile}: ${error.message}`);
    }
  }
  process.exit(code);
}

if (baseText === undefined) {
  const line = `${DOCUMENT} is not at ${short}: nothing it had can break.`;
  say(line);
  finish(0, [line], []);
}
const revisionText = readFileSync(DOCUMENT, 'utf8');
let report;
try {
  report = await redoclyDiff(baseText, revisionText);
} catch (error) {
  stop(2, error.message);
}

const { code, lines } = judgeChanges({
  changes: report.changes ?? [],
  docs: { base: parse(baseText, { maxAliasCount: -1 }), revision: parse(revisionText, { maxAliasCount: -1 }) },
  baseCommit: short,
  versions: {
    base: JSON.parse(fileAt(base.commit, 'package.json') ?? '{}').version,
    current: JSON.parse(readFileSync('package.json', 'utf8')).version,
  },
  changelogs: { base: fileAt(base.commit, CHANGELOG) ?? '', current: fileNow(CHANGELOG) ?? '' },
});
for (const line of lines) say(line);
finish(code, lines, report.changes ?? []);
