// Applies an OpenAPI Overlay 1.0.0 document the way Redocly CLI's `bundle --overlay` does, and
// says which actions matched nothing: Redocly skips such an action without a word, so a profile
// whose target went stale would silently keep the base's text. The profiles' build and suite use
// it to find those actions and to name what each action changes (docs/profiles.md); the files
// the package ships come from Redocly itself, and the suite checks both results are equal.
//
// Targets are JSONPath (RFC 9535) in the subset the profiles use: `$`, `.name`, `['name']`,
// `[index]`, `.*`, `[*]`, `..` before any of these, and filters `[?…]` made of `@`, `@.name` and
// `@['name']` paths, string, number and boolean literals, `==`, `!=`, `&&`, `||` and `!`. Anything
// else is refused with the expression named, rather than read some other way.

/** @typedef {null | boolean | number | string | Json[] | { [key: string]: Json }} Json */

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const isContainer = (value) => typeof value === 'object' && value !== null;

class Reader {
  constructor(text) {
    this.text = text;
    this.at = 0;
  }
  fail(why) {
    throw new Error(`JSONPath ${JSON.stringify(this.text)} at ${this.at}: ${why}`);
  }
  skipSpace() {
    while (this.text[this.at] === ' ') this.at += 1;
  }
  eat(token) {
    this.skipSpace();
    if (!this.text.startsWith(token, this.at)) return false;
    this.at += token.length;
    return true;
  }
  expect(token) {
    if (!this.eat(token)) this.fail(`expected ${token}`);
  }
  name() {
    const match = /^[A-Za-z_$][\w$-]*/.exec(this.text.slice(this.at));
    if (!match) this.fail('expected a member name');
    this.at += match[0].length;
    return match[0];
  }
  string() {
    this.skipSpace();
    const quote = this.text[this.at];
    if (quote !== "'" && quote !== '"') this.fail('expected a quoted string');
    let value = '';
    for (this.at += 1; this.at < this.text.length; this.at += 1) {
      const c = this.text[this.at];
      if (c === quote) {
        this.at += 1;
        return value;
      }
      if (c === '\\') {
        this.at += 1;
        const escaped = this.text[this.at];
        if (escaped !== quote && escaped !== '\\') this.fail('only \\\\ and an escaped quote are read in strings');
        value += escaped;
      } else value += c;
    }
    return this.fail('unterminated string');
  }
}

/** A selector: `{ name }`, `{ index }`, `{ wildcard: true }` or `{ filter }`. */
function readSelector(r) {
  r.skipSpace();
  const c = r.text[r.at];
  if (c === "'" || c === '"') return { name: r.string() };
  if (c === '*') {
    r.at += 1;
    return { wildcard: true };
  }
  if (c === '?') {
    r.at += 1;
    return { filter: readOr(r) };
  }
  const match = /^-?\d+/.exec(r.text.slice(r.at));
  if (!match) r.fail('expected a name, an index, * or a filter');
  r.at += match[0].length;
  return { index: Number(match[0]) };
}

/** The segments of a path after `$` or `@`: each `{ descendant, selector }`. */
function readSegments(r, inFilter) {
  const segments = [];
  for (;;) {
    const start = r.at;
    if (r.text.startsWith('..', r.at)) {
      r.at += 2;
      if (r.text[r.at] === '[') {
        r.at += 1;
        segments.push({ descendant: true, selector: readSelector(r) });
        r.expect(']');
      } else if (r.text[r.at] === '*') {
        r.at += 1;
        segments.push({ descendant: true, selector: { wildcard: true } });
      } else segments.push({ descendant: true, selector: { name: r.name() } });
    } else if (r.text[r.at] === '.') {
      r.at += 1;
      if (r.text[r.at] === '*') {
        r.at += 1;
        segments.push({ descendant: false, selector: { wildcard: true } });
      } else segments.push({ descendant: false, selector: { name: r.name() } });
    } else if (r.text[r.at] === '[') {
      r.at += 1;
      const selector = readSelector(r);
      if (inFilter && selector.filter) r.fail('a filter inside a filter is not read here');
      segments.push({ descendant: false, selector });
      r.expect(']');
    } else {
      r.at = start;
      return segments;
    }
  }
}

function readOr(r) {
  let left = readAnd(r);
  while (r.eat('||')) left = { or: [left, readAnd(r)] };
  return left;
}

function readAnd(r) {
  let left = readComparison(r);
  while (r.eat('&&')) left = { and: [left, readComparison(r)] };
  return left;
}

function readComparison(r) {
  const left = readOperand(r);
  for (const op of ['==', '!=']) {
    if (r.eat(op)) return { compare: op, left, right: readOperand(r) };
  }
  if (left.literal !== undefined) r.fail('a literal alone is not a test');
  return { exists: left };
}

function readOperand(r) {
  r.skipSpace();
  if (r.eat('!')) return { not: readOperand(r) };
  if (r.eat('(')) {
    const inner = readOr(r);
    r.expect(')');
    return { group: inner };
  }
  const c = r.text[r.at];
  if (c === '@') {
    r.at += 1;
    const segments = readSegments(r, true);
    if (segments.some((s) => s.descendant || s.selector.wildcard || s.selector.filter))
      r.fail('a filter reads only singular paths (@.name, @[index])');
    return { path: segments };
  }
  if (c === "'" || c === '"') return { literal: r.string() };
  for (const [word, value] of [
    ['true', true],
    ['false', false],
    ['null', null],
  ]) {
    if (r.text.startsWith(word, r.at)) {
      r.at += word.length;
      return { literal: value };
    }
  }
  const match = /^-?\d+(\.\d+)?/.exec(r.text.slice(r.at));
  if (!match) r.fail('expected @, a literal or a parenthesis');
  r.at += match[0].length;
  return { literal: Number(match[0]) };
}

/** Parses a target expression; throws on anything outside the subset. */
export function parseJsonPath(text) {
  const r = new Reader(text);
  r.expect('$');
  const segments = readSegments(r, false);
  r.skipSpace();
  if (r.at !== text.length) r.fail('unexpected text');
  return segments;
}

const NOTHING = Symbol('nothing');

function singular(value, segments) {
  let current = value;
  for (const { selector } of segments) {
    if (selector.name !== undefined)
      current = isObject(current) && Object.hasOwn(current, selector.name) ? current[selector.name] : NOTHING;
    else if (Array.isArray(current)) {
      const i = selector.index < 0 ? current.length + selector.index : selector.index;
      current = i >= 0 && i < current.length ? current[i] : NOTHING;
    } else current = NOTHING;
    if (current === NOTHING) return NOTHING;
  }
  return current;
}

function operandValue(operand, node) {
  if (operand.literal !== undefined) return operand.literal;
  return singular(node, operand.path);
}

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function test(filter, node) {
  if (filter.or) return test(filter.or[0], node) || test(filter.or[1], node);
  if (filter.and) return test(filter.and[0], node) && test(filter.and[1], node);
  if (filter.exists) {
    const operand = filter.exists;
    if (operand.not) return !test({ exists: operand.not }, node);
    if (operand.group) return test(operand.group, node);
    return operandValue(operand, node) !== NOTHING;
  }
  const left = operandValue(filter.left, node);
  const right = operandValue(filter.right, node);
  const equal = left === NOTHING || right === NOTHING ? left === right : sameJson(left, right);
  return filter.compare === '==' ? equal : !equal;
}

/** The children of a node a selector picks, as [key, value] pairs, in document order. */
function pick(node, selector) {
  if (!isContainer(node)) return [];
  const entries = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
  if (selector.wildcard) return entries;
  if (selector.filter) return entries.filter(([, v]) => test(selector.filter, v));
  if (selector.name !== undefined)
    return isObject(node) && Object.hasOwn(node, selector.name) ? [[selector.name, node[selector.name]]] : [];
  if (!Array.isArray(node)) return [];
  const i = selector.index < 0 ? node.length + selector.index : selector.index;
  return i >= 0 && i < node.length ? [[i, node[i]]] : [];
}

/** The node and its descendants, each with its key path, the node first (RFC 9535's order). */
function descendants(node, path, out) {
  out.push([path, node]);
  if (isContainer(node))
    for (const [key, value] of Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node))
      descendants(value, [...path, key], out);
  return out;
}

/** The key paths (arrays of names and indexes) a target selects in `doc`, each once. */
export function selectPaths(doc, target) {
  let found = [[[], doc]];
  for (const { descendant, selector } of parseJsonPath(target)) {
    const next = [];
    for (const [path, node] of found) {
      const bases = descendant ? descendants(node, path, []) : [[path, node]];
      for (const [basePath, base] of bases)
        for (const [key, value] of pick(base, selector)) next.push([[...basePath, key], value]);
    }
    found = next;
  }
  const seen = new Set();
  return found
    .map(([path]) => path)
    .filter((path) => {
      const key = JSON.stringify(path);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

const at = (doc, path) => path.reduce((node, key) => node[key], doc);
const kindOf = (value) => (Array.isArray(value) ? 'array' : isObject(value) ? 'object' : 'primitive');

/** Overlay 1.0's update: objects merge member by member, arrays append, primitives replace. */
function merge(target, update, where) {
  for (const [key, value] of Object.entries(update)) {
    const current = target[key];
    if (!Object.hasOwn(target, key)) target[key] = structuredClone(value);
    else if (isObject(current) && isObject(value)) merge(current, value, `${where}.${key}`);
    else if (Array.isArray(current) && Array.isArray(value)) target[key] = [...current, ...structuredClone(value)];
    else if (kindOf(current) === 'primitive' && kindOf(value) === 'primitive') target[key] = value;
    else throw new Error(`cannot apply ${kindOf(value)} to ${kindOf(current)} at ${where}.${key}`);
  }
}

/**
 * Applies the overlay's actions in order to a copy of `doc`. Returns the result and, for each
 * action, the key paths its target selected (an empty list is an action that did nothing).
 */
export function applyOverlay(doc, overlay) {
  const result = structuredClone(doc);
  const matches = [];
  for (const [i, action] of (overlay.actions ?? []).entries()) {
    const paths = selectPaths(result, action.target);
    matches.push(paths);
    if (action.remove === true) {
      // Later array indexes first, so that removing one does not move the next.
      const ordered = [...paths].sort((a, b) => {
        const ka = a.at(-1);
        const kb = b.at(-1);
        return (typeof kb === 'number' ? kb : -1) - (typeof ka === 'number' ? ka : -1);
      });
      for (const path of ordered) {
        if (path.length === 0) throw new Error(`action ${i}: cannot remove the root`);
        const parent = at(result, path.slice(0, -1));
        if (Array.isArray(parent)) parent.splice(path.at(-1), 1);
        else delete parent[path.at(-1)];
      }
      continue;
    }
    if (action.update === undefined) throw new Error(`action ${i}: neither update nor remove`);
    for (const path of paths) {
      const node = at(result, path);
      if (kindOf(node) === 'primitive') {
        if (kindOf(action.update) !== 'primitive')
          throw new Error(`action ${i}: cannot apply ${kindOf(action.update)} to a primitive at ${action.target}`);
        at(result, path.slice(0, -1))[path.at(-1)] = action.update;
      } else if (Array.isArray(node))
        node.push(
          ...(Array.isArray(action.update) ? structuredClone(action.update) : [structuredClone(action.update)]),
        );
      else if (isObject(action.update)) merge(node, action.update, action.target);
      else throw new Error(`action ${i}: cannot apply ${kindOf(action.update)} to an object at ${action.target}`);
    }
  }
  return { document: result, matches };
}
