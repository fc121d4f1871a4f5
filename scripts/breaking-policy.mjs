// The policy of `npm run check:breaking` (scripts/check-breaking.mjs), apart from git and
// `redocly diff` so that it can be tested in-process: from the changes `redocly diff` found and
// the document as parsed at the base and now, which changes break the document's users, the name
// each must go by in CHANGELOG.md, every operation each reaches, and the verdict: a breaking
// change passes only when the package's major version went up (the minor before 1.0) and a line
// added to CHANGELOG.md since the base names it. Pure: no file, process or clock is read here.
//
// Redocly reports a change to a shared schema under the first operation it met; the operations a
// change reaches are found here instead, from the document: every operation that references the
// changed component, through $refs at any depth.

const CHANGELOG = 'CHANGELOG.md';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

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

/** The value at a local ref such as `#/components/schemas/User`, or undefined. */
function resolve(doc, ref) {
  let node = doc;
  for (const segment of segmentsOf(ref)) node = node !== null && typeof node === 'object' ? node[segment] : undefined;
  return node;
}

/** The node at `segments` of `doc`, its `$ref` followed (a few hops at most). */
function nodeAt(doc, segments) {
  let node = doc;
  for (const segment of segments) node = node !== null && typeof node === 'object' ? node[segment] : undefined;
  for (let hops = 0; hops < 8 && node !== null && typeof node === 'object' && typeof node.$ref === 'string'; hops++)
    node = resolve(doc, node.$ref);
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
      for (const requirement of operation.security ?? doc.security ?? [])
        for (const name of Object.keys(requirement ?? {})) reached.add(`components/securitySchemes/${name}`);
      operations.push({ path, method, label: operation.operationId ?? `${method.toUpperCase()} ${path}`, reached });
    }
  }
  return operations;
}

/** The operations of `operations` that a change at `pointer` reaches. */
function reachedBy(operations, pointer) {
  const [root, first, second] = segmentsOf(pointer);
  if (root === 'components' && first && second)
    return operations.filter((op) => op.reached.has(`components/${first}/${second}`));
  if (root === 'paths' && first !== undefined)
    return operations.filter((op) => op.path === first && (!METHODS.includes(second) || op.method === second));
  // The servers, the document's security and the like: every operation.
  return root === undefined ? [] : operations;
}

/**
 * The name a CHANGELOG entry must use for a change at `pointer`: the schema or other component
 * and the property below it (`Label.color`, `AddCollaboratorOption.permission`); for what is
 * written inside an operation, its operationId followed by the parameter's name
 * (`adminGetAllOrgs.q`) or the response's status and header (`adminGetAllOrgs.404`,
 * `adminGetAllOrgs.200.X-Total-Count`), then the properties (`repoGetKey.200.title`). The
 * operationId alone names only a change to the operation as a whole (removed, a method changed):
 * any line that mentions the operation would otherwise pass for a change inside it.
 */
function subjectOf(doc, pointer) {
  const segments = segmentsOf(pointer);
  const names = [];
  let rest = segments;
  if (segments[0] === 'components' && segments[2]) {
    names.push(segments[2]);
    rest = segments.slice(3);
  } else if (segments[0] === 'paths' && segments[1] !== undefined) {
    const isMethod = METHODS.includes(segments[2]);
    const operation = isMethod ? doc?.paths?.[segments[1]]?.[segments[2]] : undefined;
    names.push(operation?.operationId ?? (isMethod ? `${segments[2].toUpperCase()} ${segments[1]}` : segments[1]));
    const at = segments.slice(0, isMethod ? 3 : 2);
    rest = segments.slice(at.length);
    if (rest[0] === 'parameters' && rest[1] !== undefined) {
      const parameter = nodeAt(doc, [...at, 'parameters', rest[1]]);
      names.push(typeof parameter?.name === 'string' ? parameter.name : `parameters.${rest[1]}`);
      rest = rest.slice(2);
    } else if (rest[0] === 'responses' && rest[1] !== undefined) {
      names.push(rest[1]);
      rest = rest.slice(2);
      if (rest[0] === 'headers' && rest[1] !== undefined) {
        names.push(rest[1]);
        rest = rest.slice(2);
      }
    }
  } else {
    return segments[0] ?? '(the document)';
  }
  for (let i = 0; i < rest.length - 1; i++) if (rest[i] === 'properties') names.push(rest[++i]);
  return names.join('.');
}

/** The fields a change made required: those in the revision's `required` list that the base's lacks. */
function newlyRequired(change, docs) {
  const pointer = String(change.revision?.pointer ?? '');
  if (!pointer.endsWith('/required')) return [];
  const schema = pointer.slice(0, -'/required'.length);
  const before = resolve(docs.base, `${schema}/required`);
  const after = resolve(docs.revision, pointer);
  return Array.isArray(after)
    ? after.filter((name) => !(Array.isArray(before) && before.includes(name))).map(String)
    : [];
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `text` names `name` as a whole: `Label.color` in "Renamed `Label.color`." or "Renamed
 * Label.color to colour", not in "NotLabel.colors" or "Label.color_x". A name is bounded by
 * anything but a letter, digit, `_`, `-` or a dot that goes on with one of them.
 */
export function namesWhole(text, name) {
  return new RegExp(`(?<![\\w.-])${escapeRegExp(name)}(?![\\w-]|\\.[\\w-])`, 'u').test(text);
}

/** The breaking changes among redocly diff's `changes`, each with its messages, place, names and the operations it reaches. */
function breakingOf(changes, docs) {
  const operations = { base: operationsOf(docs.base), revision: operationsOf(docs.revision) };
  return changes
    .filter((change) => change.impact === 'major')
    .map((change) => {
      const reached = new Set();
      for (const side of ['base', 'revision'])
        for (const op of reachedBy(operations[side], change[side]?.pointer)) reached.add(op.label);
      const side = change.base?.pointer ? 'base' : 'revision';
      const subject = subjectOf(docs[side], change[side]?.pointer ?? change.path);
      const required = newlyRequired(change, docs);
      return {
        messages: (change.verdicts ?? [])
          .filter((verdict) => verdict.impact === 'major')
          .map((verdict) => `${verdict.message} (${verdict.ruleId})`),
        at: String(change[side]?.pointer ?? change.path).replace(/^#\//, ''),
        // A newly required field is named by itself (`EditMilestoneOption.note`), not by its schema alone.
        subjects: required.length > 0 ? required.map((name) => `${subject}.${name}`) : [subject],
        operations: [...reached].sort(),
      };
    });
}

/**
 * The verdict on `changes` (redocly diff's JSON report's `changes`) and the lines that say it,
 * as `npm run check:breaking` prints them after its first line: exit code 0 when nothing breaks
 * or each breaking change is allowed, 1 otherwise.
 *
 * `docs`: the document parsed at the base and now. `baseCommit`: the base's short commit, for the
 * lines. `versions`: the package's version at the base and now. `changelogs`: CHANGELOG.md's text
 * at the base ('' where it was not) and now.
 */
export function judgeChanges({ changes, docs, baseCommit, versions, changelogs }) {
  const breaking = breakingOf(changes, docs);
  const others = changes.length - breaking.length;
  const othersLine = others === 0 ? '' : ` (and ${others} that break${others === 1 ? 's' : ''} nothing)`;
  if (breaking.length === 0) return { code: 0, lines: [`no breaking change${othersLine}.`] };

  const lines = [`${breaking.length} breaking change${breaking.length > 1 ? 's' : ''}${othersLine}:`];
  for (const change of breaking) {
    lines.push('', `✗ ${change.messages.join('; ')}`, `  name: ${change.subjects.join(', ')}, at ${change.at}`);
    lines.push(
      `  reaches ${change.operations.length} operation${change.operations.length === 1 ? '' : 's'}: ${change.operations.join(', ') || '(none)'}`,
    );
  }
  lines.push('');

  // The way out: a new major version that says what it breaks.
  const baseLines = new Set(changelogs.base.split('\n'));
  const added = changelogs.current.split('\n').filter((line) => !baseLines.has(line));
  const bumped = majorWentUp(versions.base, versions.current);
  const subjects = [...new Set(breaking.flatMap((change) => change.subjects))];
  const unnamed = subjects.filter((subject) => !added.some((line) => namesWhole(line, subject)));
  if (bumped && unnamed.length === 0) {
    lines.push(
      `allowed: the version went from ${versions.base} to ${versions.current}, and ${CHANGELOG} names each change (${subjects.join(', ')}).`,
    );
    return { code: 0, lines };
  }
  const below1 = majorOf(versions.base)?.[0] === 0;
  lines.push(
    `A breaking change needs a new ${below1 ? 'minor version while below 1.0' : 'major version'} of the package and a line added to ${CHANGELOG} with each one's name.`,
  );
  if (!bumped) {
    const from = majorOf(versions.base);
    const next = from === undefined ? 'a version' : below1 ? `0.${from[1] + 1}.0` : `${from[0] + 1}.0.0`;
    lines.push(
      `- the version is ${versions.current}, against ${versions.base ?? 'none'} at ${baseCommit}: raise it to ${next} or later (npm version ${below1 ? 'minor' : 'major'}).`,
    );
  }
  if (unnamed.length > 0)
    lines.push(`- no line added to ${CHANGELOG} since ${baseCommit} names ${unnamed.join(', ')}.`);
  return { code: 1, lines };
}
