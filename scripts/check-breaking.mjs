// `npm run check:breaking -- [base]`: compares openapi.yaml with its version at a git ref through
// `redocly diff`, with the diff rules of redocly-diff.yaml, and fails on a change that breaks the
// document's users (a field renamed or removed, a new required request field, an enum value
// removed, a type changed …), unless the package's major version went up (the minor before 1.0)
// and CHANGELOG.md names the change. The base is the ref given, else the last release tag `v*`
// reachable from HEAD, else the merge base with main.
//
// Redocly reports a change to a shared schema under the first operation it met; the operations a
// change reaches are found here instead, from the document: every operation that references the
// changed component, through $refs at any depth.
//
// Exit codes: 0 no breaking change, or each one allowed; 1 a breaking change not allowed; 2 nothing
// was compared (no base, an unknown ref, redocly failing).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const DOCUMENT = 'openapi.yaml';
const CHANGELOG = 'CHANGELOG.md';
const DIFF_CONFIG = fileURLToPath(new URL('../redocly-diff.yaml', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

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
  stop(2, 'no base to compare with: no release tag v* is reachable from HEAD, and there is no main branch (nor origin/main) to take the merge base with; give one: npm run check:breaking -- <ref>');
}

/** `0.3.1` → [0, 3], `2.1.0` → [2]: what must go up for a breaking change (the minor before 1.0). */
function majorOf(version) {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(String(version));
  if (!match) return undefined;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 0 ? [major] : [0, minor];
}

function majorWentUp(base, current) {
  const [from, to] = [majorOf(base), majorOf(current)];
  if (!from || !to) return false;
  return to[0] > from[0] || (to[0] === 0 && from[0] === 0 && to[1] > from[1]);
}

/** `#/paths/~1a~1{b}/get` → ['paths', '/a/{b}', 'get'] */
function segmentsOf(pointer) {
  return String(pointer ?? '')
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((segment) => {
      let text = segment;
      try {
        text = decodeURIComponent(segment);
      } catch {
        // Not percent-encoded: taken as it is.
      }
      return text.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

const escapeSegment = (segment) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** The value at a local ref such as `#/components/schemas/User`, or undefined. */
function resolve(doc, ref) {
  let node = doc;
  for (const segment of segmentsOf(ref)) node = node !== null && typeof node === 'object' ? node[segment] : undefined;
  return node;
}

/** The document's operations, each with the components it reaches through $refs at any depth. */
function operationsOf(doc) {
  const operations = [];
  for (const [path, item] of Object.entries(doc?.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation || typeof operation !== 'object') continue;
      const reached = new Set();
      const followed = new Set();
      const walk = (node) => {
        if (node === null || typeof node !== 'object') return;
        if (Array.isArray(node)) return node.forEach(walk);
        if (typeof node.$ref === 'string' && node.$ref.startsWith('#/') && !followed.has(node.$ref)) {
          followed.add(node.$ref);
          const [root, kind, name] = segmentsOf(node.$ref);
          if (root === 'components' && kind && name) reached.add(`components/${kind}/${name}`);
          walk(resolve(doc, node.$ref));
        }
        for (const [key, value] of Object.entries(node)) if (key !== '$ref') walk(value);
      };
      walk(operation);
      walk(item.parameters);
      // Security schemes are named, not referenced.
      for (const requirement of operation.security ?? doc.security ?? []) for (const name of Object.keys(requirement ?? {})) reached.add(`components/securitySchemes/${name}`);
      operations.push({ path, method, label: operation.operationId ?? `${method.toUpperCase()} ${path}`, reached });
    }
  }
  return operations;
}

/** The operations of `operations` that a change at `pointer` reaches. */
function reachedBy(operations, pointer) {
  const [root, first, second] = segmentsOf(pointer);
  if (root === 'components' && first && second) return operations.filter((op) => op.reached.has(`components/${first}/${second}`));
  if (root === 'paths' && first !== undefined) return operations.filter((op) => op.path === first && (!METHODS.includes(second) || op.method === second));
  // The servers, the document's security and the like: every operation.
  return root === undefined ? [] : operations;
}

/**
 * The name a CHANGELOG entry must use for a change at `pointer`: the schema or other component
 * and the property below it (`Label.color`, `AddCollaboratorOption.permission`), or the
 * operationId and property for what is written inside an operation.
 */
function subjectOf(doc, pointer) {
  const segments = segmentsOf(pointer);
  const names = [];
  let rest = segments;
  if (segments[0] === 'components' && segments[2]) {
    names.push(segments[2]);
    rest = segments.slice(3);
  } else if (segments[0] === 'paths' && segments[1] !== undefined) {
    const operation = METHODS.includes(segments[2]) ? doc?.paths?.[segments[1]]?.[segments[2]] : undefined;
    names.push(operation?.operationId ?? (METHODS.includes(segments[2]) ? `${segments[2].toUpperCase()} ${segments[1]}` : segments[1]));
    rest = segments.slice(METHODS.includes(segments[2]) ? 3 : 2);
  } else {
    return segments[0] ?? '(the document)';
  }
  for (let i = 0; i < rest.length - 1; i++) if (rest[i] === 'properties') names.push(rest[++i]);
  return names.join('.');
}

/** The fields a change made required: those in the revision's `required` list that the base's lacks. */
function newlyRequired(change) {
  const pointer = String(change.revision?.pointer ?? '');
  if (!pointer.endsWith('/required')) return [];
  const schema = pointer.slice(0, -'/required'.length);
  const before = resolve(docs.base, `${schema}/required`);
  const after = resolve(docs.revision, pointer);
  return Array.isArray(after) ? after.filter((name) => !(Array.isArray(before) && before.includes(name))).map(String) : [];
}

/** Runs `redocly diff` on two files; its JSON report. */
function redoclyDiff(baseFile, revisionFile, folder) {
  const require = createRequire(import.meta.url);
  const cliPackage = require.resolve('@redocly/cli/package.json');
  const { bin } = JSON.parse(readFileSync(cliPackage, 'utf8'));
  const cli = join(dirname(cliPackage), typeof bin === 'string' ? bin : (bin.redocly ?? Object.values(bin)[0]));
  const output = join(folder, 'diff.json');
  const args = [cli, 'diff', baseFile, revisionFile, '--config', DIFF_CONFIG, '--lint-config', 'off', '--format', 'json', '--output', output, '--fail-on', 'none'];
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' } });
  if (result.status !== 0) stop(2, `redocly diff failed (exit ${result.status ?? result.signal}):\n${(result.stderr || result.stdout).trim().split('\n').slice(-15).join('\n')}`);
  return JSON.parse(readFileSync(output, 'utf8'));
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  say('Usage: npm run check:breaking -- [base]');
  say('');
  say(`Compares ${DOCUMENT} with its version at the git ref <base> (default: the last release tag v*,`);
  say('else the merge base with main) and fails on a breaking change, unless the package\'s major');
  say(`version went up (the minor before 1.0) and ${CHANGELOG} names each breaking change.`);
  process.exit(0);
}
if (args.length > 1) stop(2, 'give at most one base ref');
if (git('rev-parse', '--is-inside-work-tree') !== 'true') stop(2, 'not inside a git work tree');

const base = chooseBase(args[0]);
const short = base.commit.slice(0, 7);
say(`check:breaking: ${DOCUMENT} against ${base.ref} (${short}, ${base.why})`);
const baseText = fileAt(base.commit, DOCUMENT);
if (baseText === undefined) {
  say(`${DOCUMENT} is not at ${short}: nothing it had can break.`);
  process.exit(0);
}

const folder = mkdtempSync(join(tmpdir(), 'check-breaking-'));
let report;
try {
  const baseFile = join(folder, `base-${DOCUMENT}`);
  writeFileSync(baseFile, baseText);
  report = redoclyDiff(baseFile, DOCUMENT, folder);
} finally {
  rmSync(folder, { recursive: true, force: true });
}

const docs = { base: parse(baseText, { maxAliasCount: -1 }), revision: parse(readFileSync(DOCUMENT, 'utf8'), { maxAliasCount: -1 }) };
const operations = { base: operationsOf(docs.base), revision: operationsOf(docs.revision) };
const changes = report.changes ?? [];
const breaking = changes
  .filter((change) => change.impact === 'major')
  .map((change) => {
    const reached = new Set();
    for (const side of ['base', 'revision']) for (const op of reachedBy(operations[side], change[side]?.pointer)) reached.add(op.label);
    const side = change.base?.pointer ? 'base' : 'revision';
    const subject = subjectOf(docs[side], change[side]?.pointer ?? change.path);
    return {
      messages: (change.verdicts ?? []).filter((verdict) => verdict.impact === 'major').map((verdict) => `${verdict.message} (${verdict.ruleId})`),
      at: String(change[side]?.pointer ?? change.path).replace(/^#\//, ''),
      // A newly required field is named by itself (`EditMilestoneOption.note`), not by its schema alone.
      subjects: newlyRequired(change).map((name) => `${subject}.${name}`).concat(newlyRequired(change).length === 0 ? [subject] : []),
      operations: [...reached].sort(),
    };
  });
const others = changes.length - breaking.length;
const othersLine = others === 0 ? '' : ` (and ${others} that break${others === 1 ? 's' : ''} nothing)`;

if (breaking.length === 0) {
  say(`no breaking change${othersLine}.`);
  process.exit(0);
}
say(`${breaking.length} breaking change${breaking.length > 1 ? 's' : ''}${othersLine}:`);
for (const change of breaking) {
  say();
  say(`✗ ${change.messages.join('; ')}`);
  say(`  name: ${change.subjects.join(', ')}, at ${change.at}`);
  say(`  reaches ${change.operations.length} operation${change.operations.length === 1 ? '' : 's'}: ${change.operations.join(', ') || '(none)'}`);
}
say();

// The way out: a new major version that says what it breaks.
const baseVersion = JSON.parse(fileAt(base.commit, 'package.json') ?? '{}').version;
const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
const baseChangelog = new Set((fileAt(base.commit, CHANGELOG) ?? '').split('\n'));
const added = (() => {
  try {
    return readFileSync(CHANGELOG, 'utf8')
      .split('\n')
      .filter((line) => !baseChangelog.has(line))
      .join('\n');
  } catch {
    return '';
  }
})();
const bumped = majorWentUp(baseVersion, version);
const subjects = [...new Set(breaking.flatMap((change) => change.subjects))];
const unnamed = subjects.filter((subject) => !added.includes(subject));
if (bumped && unnamed.length === 0) {
  say(`allowed: the version went from ${baseVersion} to ${version}, and ${CHANGELOG} names each change (${subjects.join(', ')}).`);
  process.exit(0);
}
const below1 = majorOf(baseVersion)?.[0] === 0;
say(`A breaking change needs a new ${below1 ? 'minor version while below 1.0' : 'major version'} of the package and a line added to ${CHANGELOG} with each one's name.`);
if (!bumped) {
  const from = majorOf(baseVersion);
  const next = from === undefined ? 'a version' : below1 ? `0.${from[1] + 1}.0` : `${from[0] + 1}.0.0`;
  say(`- the version is ${version}, against ${baseVersion ?? 'none'} at ${short}: raise it to ${next} or later (npm version ${below1 ? 'minor' : 'major'}).`);
}
if (unnamed.length > 0) say(`- no line added to ${CHANGELOG} since ${short} names ${unnamed.join(', ')}.`);
process.exit(1);
