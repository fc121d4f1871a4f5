// The check of a world read from a state folder or another process, before the sandbox answers
// from it: its own fields, each collection a list of entries of the right shape, every record valid
// against its schema in the document (an answer that breaks the document is a 500), and what the
// sandbox finds records by and builds answers from (the schemas require nothing): ids, logins,
// names, numbers, owners; and a nextId above every id in use.
import { readDocumentFile } from '../contract/document-file.js';
import { createSchemaValidator } from '../contract/schema.js';
import { jsonShape } from '../contract/json-shape.js';
import { WORLD_FORMAT } from './world.js';

/**
 * Deepest nesting and most keys of one object in a world the sandbox writes: its records nest a
 * few levels and hold a hundred fields at most, a hook's config 64 keys. Past either, the world
 * is no sandbox's, and checking it would recurse as deep, or loop as long, as it goes.
 */
const MAX_DEPTH = 32;
const MAX_KEYS = 256;

/** Where `world` passes the bounds above, said in a sentence; undefined when it does not. */
function boundsProblem(world: unknown): string | undefined {
  if (jsonShape(world, Number.POSITIVE_INFINITY, MAX_DEPTH).depth > MAX_DEPTH)
    return `it nests deeper than the ${MAX_DEPTH} levels of any world the sandbox writes`;
  const stack = [world];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next !== 'object' || next === null) continue;
    const values = Object.values(next);
    if (!Array.isArray(next) && values.length > MAX_KEYS)
      return `an object of it holds ${values.length} keys, more than the ${MAX_KEYS} of any the sandbox writes`;
    for (const value of values) stack.push(value);
  }
  return undefined;
}

/** An entry's field: an id, a text, a list of ids, a record of a schema, or a list of such records. */
type Field = 'id' | 'text' | 'ids' | { record: string } | { records: string };

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
};

/** A field a record must have: an id, a count, a text, a boolean, or an owner (a record with an id and a login). */
type Need = 'id' | 'count' | 'text' | 'boolean' | 'owner';

/** The fields the sandbox relies on, by schema: what it finds a record by, and what its answers are built from. */
const NEEDS: Record<string, Record<string, Need>> = {
  User: { id: 'id', login: 'text' },
  Organization: { id: 'id', name: 'text' },
  Repository: { id: 'id', name: 'text', full_name: 'text', owner: 'owner' },
  Hook: { id: 'id' },
  Issue: { id: 'id', number: 'count' },
  // issueRemoveAssignees answers a pull request as an issue, with its addresses.
  PullRequest: { id: 'id', number: 'count', url: 'text', html_url: 'text' },
  // An edit reaches every copy of a label or milestone by its id and these fields.
  Label: { id: 'id', color: 'text', exclusive: 'boolean' },
  Milestone: { id: 'id', title: 'text', open_issues: 'count', closed_issues: 'count' },
  GPGKey: { id: 'id' },
  Package: { id: 'id', type: 'text', name: 'text', owner: 'owner' },
  NotificationThread: { id: 'id' },
  DeployKey: { id: 'id' },
  Team: { id: 'id' },
  ActionWorkflow: { id: 'text' },
  Attachment: { id: 'id' },
  OAuth2Application: { id: 'id' },
};
/** Users act: userCurrentPostGPGKey names the caller's address in a new key. */
const USER_NEEDS: Record<string, Need> = { ...NEEDS.User, email: 'text' };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

const NEED_WORDS: Record<Need, string> = {
  id: 'an id',
  count: 'a count',
  text: 'a text',
  boolean: 'true or false',
  owner: 'an owner with an id and a login',
};
const meets: Record<Need, (value: unknown) => boolean> = {
  id: isId,
  count: isId,
  text: (value) => typeof value === 'string',
  boolean: (value) => typeof value === 'boolean',
  owner: (value) => isObject(value) && isId(value.id) && typeof value.login === 'string',
};

/** The largest numeric `id` anywhere in `value`, and where. */
function largestId(value: unknown): { id: number; at: string } | undefined {
  let largest: { id: number; at: string } | undefined;
  // A stack, not recursion: the depth of a record is what a file says.
  const stack: [unknown, string][] = [[value, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, at] = next;
    if (Array.isArray(item)) for (const [index, entry] of item.entries()) stack.push([entry, `${at}[${index}]`]);
    else if (isObject(item)) {
      if (typeof item.id === 'number' && (largest === undefined || item.id > largest.id))
        largest = { id: item.id, at: `${at}.id` };
      for (const [key, field] of Object.entries(item)) stack.push([field, at === '' ? key : `${at}.${key}`]);
    }
  }
  return largest;
}

/**
 * Says what is wrong with a world, or undefined when it is one the sandbox can answer from.
 * `trusted` is a world that passed (or one the sandbox made): an entry equal to its entry at the
 * same place passes as that one did, unchecked. A world another process wrote differs from the
 * one held here by the records its writes touched, and only those cost a schema check.
 */
export type WorldCheck = (world: unknown, trusted?: unknown) => string | undefined;

/** Whether two JSON values are equal; both nest at most MAX_DEPTH levels (boundsProblem checked the first). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

/** Checks made, by document: Ajv compiles the schemas once a process. */
const made = new Map<string, WorldCheck>();

/** A check against the schemas of `document` (an openapi.yaml), which it loads with Ajv. */
export function createWorldCheck(document: string): WorldCheck {
  let check = made.get(document);
  if (!check) made.set(document, (check = makeWorldCheck(document)));
  return check;
}

function makeWorldCheck(document: string): WorldCheck {
  const schemas = createSchemaValidator(readDocumentFile(document).document);
  if (schemas.error !== undefined) throw new Error(schemas.error);

  const recordProblem = (
    schema: string,
    value: unknown,
    where: string,
    needs = NEEDS[schema] ?? {},
  ): string | undefined => {
    if (!isObject(value))
      return `${where} is ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}, not a record`;
    const [problem] = schemas.check(`/components/schemas/${schema}`, value);
    if (problem !== undefined) return `${where} is not a ${schema}: ${problem}`;
    for (const [field, need] of Object.entries(needs)) {
      if (!meets[need](value[field]))
        return `${where}.${field} is ${field in value ? `not ${NEED_WORDS[need]}` : 'missing'}`;
    }
    return undefined;
  };

  const fieldProblem = (field: Field, value: unknown, where: string): string | undefined => {
    if (field === 'id') return isId(value) ? undefined : `${where} is not an id`;
    if (field === 'text') return typeof value === 'string' ? undefined : `${where} is not a text`;
    if (field === 'ids') return Array.isArray(value) && value.every(isId) ? undefined : `${where} is not a list of ids`;
    if ('record' in field) return recordProblem(field.record, value, where);
    if (!Array.isArray(value)) return `${where} is not a list`;
    for (const [index, item] of value.entries()) {
      const problem = recordProblem(field.records, item, `${where}[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  };

  return (world, trusted) => {
    if (!isObject(world)) return 'it is not a JSON object';
    const bounds = boundsProblem(world);
    if (bounds) return bounds;
    if (world.format !== WORLD_FORMAT) return `its format is ${JSON.stringify(world.format)}, not ${WORLD_FORMAT}`;
    if (!isId(world.nextId) || (world.nextId as number) < 1) return 'nextId is not a positive id';
    if (!isId(world.created)) return 'created is not a count';
    for (const [name, shape] of Object.entries(COLLECTIONS)) {
      const list = world[name];
      if (!Array.isArray(list)) return `${name} is not a list`;
      const known = isObject(trusted) && Array.isArray(trusted[name]) ? (trusted[name] as unknown[]) : [];
      for (const [index, entry] of list.entries()) {
        if (index < known.length && sameJson(entry, known[index])) continue;
        const where = `${name}[${index}]`;
        const problem =
          typeof shape === 'string'
            ? recordProblem(shape, entry, where, name === 'users' ? USER_NEEDS : undefined)
            : !isObject(entry)
              ? `${where} is ${entry === null ? 'null' : typeof entry}, not an entry`
              : Object.entries(shape)
                  .map(([field, kind]) => fieldProblem(kind, entry[field], `${where}.${field}`))
                  .find((found) => found !== undefined);
        if (problem) return problem;
      }
    }
    // Every request acts as one of the users (a token as the first): there is always one.
    if ((world.users as unknown[]).length === 0) return 'users is empty';
    // A new record takes nextId: one in use would name two records.
    const largest = largestId(world);
    if (largest !== undefined && largest.id >= (world.nextId as number))
      return `nextId is ${String(world.nextId)}, not above the ids in use (${largest.id}, at ${largest.at})`;
    return undefined;
  };
}
