// The check of a world read from a state folder or PostgreSQL: each collection a list of entries of the right shape,
// every record valid against its schema (an answer that breaks the document is a 500) with what the sandbox finds
// records by and builds answers from, and a nextId above every id.
import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../contract/document.js';
import { readDocumentFile } from '../contract/document-file.js';
import { createSchemaValidator } from '../contract/schema.js';
import type { Stored } from './store.js';
import { WORLD_FORMAT, type World } from './world.js';

/** Past the nesting and keys of any world the sandbox writes (a hook's config holds 64), a check would recurse or loop as far as the world goes. */
const MAX_DEPTH = 32;
const MAX_KEYS = 256;

/** Where `world` passes the bounds above, said in a sentence; else the largest numeric `id` in it, and where. */
function walk(world: object, at = '', depth = 0): string | { id: number; at: string } | undefined {
  let largest: { id: number; at: string } | undefined;
  let crowded: string | undefined;
  // A stack, not recursion: the depth of a world is what its file says.
  const stack: [unknown, string, number][] = [[world, at, depth]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, at, depth] = next;
    if (depth > MAX_DEPTH) return `it nests deeper than the ${MAX_DEPTH} levels of any world the sandbox writes`;
    if (typeof item !== 'object' || item === null) continue;
    const entries = Object.entries(item);
    const list = Array.isArray(item);
    if (!list && entries.length > MAX_KEYS)
      crowded ??= `an object of it holds ${entries.length} keys, more than the ${MAX_KEYS} of any the sandbox writes`;
    const id: unknown = (item as { id?: unknown }).id;
    if (!list && typeof id === 'number' && (largest === undefined || id > largest.id)) largest = { id, at: `${at}.id` };
    for (const [key, value] of entries)
      stack.push([value, list ? `${at}[${key}]` : at === '' ? key : `${at}.${key}`, depth + 1]);
  }
  return crowded ?? largest;
}

type Field = Need | { record: string } | { records: string };

/** Each collection of a world: records of a schema, or entries whose fields are given. */
const COLLECTIONS: Record<string, string | Record<string, Field>> = {
  users: 'User',
  owners: 'User',
  orgs: 'Organization',
  repos: 'Repository',
  hooks: { repo: 'id', hook: { record: 'Hook' } },
  issues: { repo: 'id', issue: { record: 'Issue' } },
  pulls: { repo: 'id', pull: { record: 'PullRequest' } },
  orgLabels: { org: 'id', label: { record: 'Label' } },
  repoLabels: { repo: 'id', label: { record: 'Label' } },
  milestones: { repo: 'id', milestone: { record: 'Milestone' } },
  gpgKeys: { user: 'id', armored: 'text', key: { record: 'GPGKey' } },
  packages: 'Package',
  threads: 'NotificationThread',
  deployKeys: { repo: 'id', key: { record: 'DeployKey' } },
  teams: { team: { record: 'Team' }, members: 'ids' },
  workflows: { repo: 'id', workflow: { record: 'ActionWorkflow' } },
  secrets: { user: 'id', name: 'text' },
  releases: { repo: 'id', id: 'id', attachments: { records: 'Attachment' } },
  comments: { repo: 'id', id: 'id', attachments: { records: 'Attachment' } },
  collaborators: { repo: 'id', user: 'id', permission: 'text' },
  apps: { user: 'id', app: { record: 'OAuth2Application' } },
  redirects: { name: 'text', user: 'id' },
  branches: { repo: 'id', name: 'text' },
};

type Need = 'id' | 'ids' | 'count' | 'text' | 'boolean' | 'owner';

/** The fields the sandbox relies on, by schema: what it finds a record by, and what its answers are built from (only an id where none are given). */
const NEEDS: Record<string, Record<string, Need>> = {
  User: { id: 'id', login: 'text' },
  Organization: { id: 'id', name: 'text' },
  Repository: { id: 'id', name: 'text', full_name: 'text', owner: 'owner' },
  Issue: { id: 'id', number: 'count' },
  // issueRemoveAssignees answers a pull request as an issue, with its addresses.
  PullRequest: { id: 'id', number: 'count', url: 'text', html_url: 'text' },
  // An edit reaches every copy of a label or milestone by its id and these fields.
  Label: { id: 'id', color: 'text', exclusive: 'boolean' },
  Milestone: { id: 'id', title: 'text', open_issues: 'count', closed_issues: 'count' },
  Package: { id: 'id', type: 'text', name: 'text', owner: 'owner' },
  ActionWorkflow: { id: 'text' },
};
/** Users act: userCurrentPostGPGKey names the caller's address in a new key. */
const USER_NEEDS: Record<string, Need> = { ...NEEDS.User, email: 'text' };

const isId = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

/** Each need, as a message says it, and its test. */
const MEETS: Record<Need, [string, (value: unknown) => boolean]> = {
  id: ['an id', isId],
  ids: ['a list of ids', (value) => Array.isArray(value) && value.every(isId)],
  count: ['a count', isId],
  text: ['a text', (value) => typeof value === 'string'],
  boolean: ['true or false', (value) => typeof value === 'boolean'],
  owner: [
    'an owner with an id and a login',
    (value) => isObject(value) && isId(value.id) && typeof value.login === 'string',
  ],
};

/** What is wrong with a world, or undefined; an entry equal to the one at its place in `trusted` (a world that passed) passes unchecked. */
type WorldCheck = (world: unknown, trusted?: unknown) => string | undefined;
/** What is wrong with a world where only the entries of `touched` (by collection, their indexes) may have changed. */
type ChangeCheck = (world: Record<string, unknown>, touched: Map<string, Set<number>>) => string | undefined;

/** Checks made, by document: Ajv compiles the schemas once a process. */
const made = new Map<string, { whole: WorldCheck; changed: ChangeCheck }>();
const checksOf = (document: string | undefined) => {
  let checks = made.get(document ?? '');
  if (!checks) made.set(document ?? '', (checks = makeWorldCheck(document)));
  return checks;
};

/** A world of format 2 (before worlds knew branches) as format 3: each repository's default branch and its pull requests' branches. */
function upgraded(world: Record<string, unknown>): boolean {
  if (world.format !== 2 || !Array.isArray(world.repos) || !Array.isArray(world.pulls)) return false;
  const branches = new Map<string, { repo: unknown; name: unknown }>();
  const add = (repo: unknown, name: unknown) => {
    if (isId(repo) && typeof name === 'string' && name !== '') branches.set(`${repo}\0${name}`, { repo, name });
  };
  for (const repo of world.repos) if (isObject(repo)) add(repo.id, repo.default_branch || 'main');
  // What is not an entry is left for the check to name.
  for (const entry of world.pulls.filter(isObject)) {
    const pull = isObject(entry.pull) ? entry.pull : {};
    for (const side of [pull.base, pull.head]) if (isObject(side)) add(side.repo_id ?? entry.repo, side.ref);
  }
  Object.assign(world, { format: WORLD_FORMAT, branches: [...branches.values()] });
  return true;
}

/** `text` as a stored world, checked against the schemas of `document`; else what is wrong (none: it is not JSON). */
export function readWorld(text: string, document?: string, trusted?: World): Stored | { problem?: string } {
  let world: unknown;
  try {
    world = JSON.parse(text);
  } catch {
    return {};
  }
  const bytes = Buffer.byteLength(isObject(world) && upgraded(world) ? JSON.stringify(world) : text);
  const problem = checksOf(document).whole(world, trusted);
  return problem === undefined ? { world: world as World, bytes } : { problem };
}

/**
 * `held` (a world that passed) changed by `changes` (worldChange's texts, oldest first), checked as
 * `readWorld` checks a whole world but only where it changed; else what is wrong (none: a change is not JSON).
 */
export function readChanges(
  held: Stored,
  changes: readonly string[],
  document?: string,
): Stored | { problem?: string } {
  const checks = checksOf(document);
  const world: Record<string, unknown> = { ...held.world };
  const touched = new Map<string, Set<number>>();
  let bytes = held.bytes;
  for (const text of changes) {
    let change: unknown;
    try {
      change = JSON.parse(text);
    } catch {
      return {};
    }
    if (!isObject(change) || !isId(change.bytes) || !isObject(change.fields) || !isObject(change.lists))
      return { problem: 'a change of it is not one the sandbox wrote' };
    bytes = change.bytes as number;
    for (const [key, value] of Object.entries(change.fields)) {
      // Own fields only: "__proto__" in a change is a key JSON.parse made, never the prototype.
      if (key === '__proto__' || !Object.hasOwn(held.world, key) || Array.isArray(world[key]))
        return { problem: `a change of it sets ${key}, which is not a field of a world` };
      world[key] = value;
    }
    for (const [name, value] of Object.entries(change.lists)) {
      const list = world[name];
      const [length, ...set] = Array.isArray(value) ? (value as unknown[]) : [];
      const wrong = { problem: `a change of it to ${name} is not one the sandbox wrote` };
      if (!Object.hasOwn(COLLECTIONS, name) || !Array.isArray(list) || !isId(length)) return wrong;
      const entries = list.slice(0, length as number);
      const indexes = touched.get(name) ?? new Set<number>();
      for (const item of set) {
        const [index, entry] = Array.isArray(item) && item.length === 2 ? item : [];
        if (!isId(index) || (index as number) >= (length as number)) return wrong;
        entries[index as number] = entry;
        indexes.add(index as number);
      }
      // A longer list has each new entry given.
      for (let index = list.length; index < (length as number); index++) if (!(index in entries)) return wrong;
      world[name] = entries;
      touched.set(name, new Set([...indexes].filter((index) => index < (length as number))));
    }
  }
  // Ids below the nextId the held world passed with stay below a nextId that never goes down.
  if (isId(world.nextId) && (world.nextId as number) < held.world.nextId)
    return { problem: `nextId went down from ${held.world.nextId} to ${String(world.nextId)}` };
  const problem = checks.changed(world, touched);
  if (problem !== undefined) return { problem };
  return { world: world as unknown as World, bytes };
}

function makeWorldCheck(document: string | undefined): { whole: WorldCheck; changed: ChangeCheck } {
  const schemas = createSchemaValidator(readDocumentFile(document).document);
  if (schemas.error !== undefined) throw new Error(schemas.error);

  const recordProblem = (schema: string, value: unknown, where: string, needs = NEEDS[schema] ?? { id: 'id' }) => {
    if (!isObject(value))
      return `${where} is ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}, not a record`;
    const [problem] = schemas.check(`/components/schemas/${schema}`, value);
    if (problem !== undefined) return `${where} is not a ${schema}: ${problem}`;
    for (const [field, need] of Object.entries(needs)) {
      if (!MEETS[need][1](value[field]))
        return `${where}.${field} is ${field in value ? `not ${MEETS[need][0]}` : 'missing'}`;
    }
    return undefined;
  };

  const fieldProblem = (field: Field, value: unknown, where: string): string | undefined => {
    if (typeof field === 'string') return MEETS[field][1](value) ? undefined : `${where} is not ${MEETS[field][0]}`;
    if ('record' in field) return recordProblem(field.record, value, where);
    if (!Array.isArray(value)) return `${where} is not a list`;
    return value.map((item, index) => recordProblem(field.records, item, `${where}[${index}]`)).find(Boolean);
  };

  /** What is wrong with entry `index` of the collection `name`. */
  const entryProblem = (name: string, entry: unknown, index: number): string | undefined => {
    const shape = COLLECTIONS[name]!;
    const where = `${name}[${index}]`;
    if (typeof shape === 'string') return recordProblem(shape, entry, where, name === 'users' ? USER_NEEDS : undefined);
    if (!isObject(entry)) return `${where} is ${entry === null ? 'null' : typeof entry}, not an entry`;
    return Object.entries(shape)
      .map(([field, kind]) => fieldProblem(kind, entry[field], `${where}.${field}`))
      .find((found) => found !== undefined);
  };
  /** What is wrong with the fields of `world` that are not its entries. */
  const frameProblem = (world: Record<string, unknown>): string | undefined => {
    if (world.format !== WORLD_FORMAT) return `its format is ${JSON.stringify(world.format)}, not ${WORLD_FORMAT}`;
    if (!isId(world.nextId) || (world.nextId as number) < 1) return 'nextId is not a positive id';
    if (!isId(world.created)) return 'created is not a count';
    const missing = Object.keys(COLLECTIONS).find((name) => !Array.isArray(world[name]));
    if (missing !== undefined) return `${missing} is not a list`;
    // Every request acts as one of the users (a token as the first): there is always one.
    if ((world.users as unknown[]).length === 0) return 'users is empty';
    return undefined;
  };
  /** A new record takes nextId: one in use would name two records. */
  const idProblem = (world: Record<string, unknown>, largest: { id: number; at: string } | undefined) =>
    largest !== undefined && largest.id >= (world.nextId as number)
      ? `nextId is ${String(world.nextId)}, not above the ids in use (${largest.id}, at ${largest.at})`
      : undefined;

  const whole: WorldCheck = (world, trusted) => {
    if (!isObject(world)) return 'it is not a JSON object';
    const walked = walk(world);
    if (typeof walked === 'string') return walked;
    const framed = frameProblem(world);
    if (framed !== undefined) return framed;
    for (const name of Object.keys(COLLECTIONS)) {
      const known = isObject(trusted) && Array.isArray(trusted[name]) ? (trusted[name] as unknown[]) : [];
      for (const [index, entry] of (world[name] as unknown[]).entries()) {
        if (index < known.length && isDeepStrictEqual(entry, known[index])) continue;
        const problem = entryProblem(name, entry, index);
        if (problem) return problem;
      }
    }
    return idProblem(world, walked);
  };
  const changed: ChangeCheck = (world, touched) => {
    const framed = frameProblem(world);
    if (framed !== undefined) return framed;
    for (const [name, indexes] of touched) {
      for (const index of indexes) {
        const entry = (world[name] as unknown[])[index];
        // At the depth it has in the world: the world, its list, the entry.
        const walked = walk(entry as object, `${name}[${index}]`, 2);
        const problem =
          typeof walked === 'string' ? walked : (entryProblem(name, entry, index) ?? idProblem(world, walked));
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  };
  return { whole, changed };
}
