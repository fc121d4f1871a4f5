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
function walk(world: object): string | { id: number; at: string } | undefined {
  let largest: { id: number; at: string } | undefined;
  let crowded: string | undefined;
  // A stack, not recursion: the depth of a world is what its file says.
  const stack: [unknown, string, number][] = [[world, '', 0]];
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

/** Checks made, by document: Ajv compiles the schemas once a process. */
const made = new Map<string, WorldCheck>();

/** `text` as a stored world, checked against the schemas of `document`; else what is wrong (none: it is not JSON). */
export function readWorld(text: string, document?: string, trusted?: World): Stored | { problem?: string } {
  let world: unknown;
  try {
    world = JSON.parse(text);
  } catch {
    return {};
  }
  let check = made.get(document ?? '');
  if (!check) made.set(document ?? '', (check = makeWorldCheck(document)));
  const problem = check(world, trusted);
  return problem === undefined ? { world: world as World, bytes: Buffer.byteLength(text) } : { problem };
}

function makeWorldCheck(document: string | undefined): WorldCheck {
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

  return (world, trusted) => {
    if (!isObject(world)) return 'it is not a JSON object';
    const walked = walk(world);
    if (typeof walked === 'string') return walked;
    if (world.format !== WORLD_FORMAT) return `its format is ${JSON.stringify(world.format)}, not ${WORLD_FORMAT}`;
    if (!isId(world.nextId) || (world.nextId as number) < 1) return 'nextId is not a positive id';
    if (!isId(world.created)) return 'created is not a count';
    for (const [name, shape] of Object.entries(COLLECTIONS)) {
      const list = world[name];
      if (!Array.isArray(list)) return `${name} is not a list`;
      const known = isObject(trusted) && Array.isArray(trusted[name]) ? (trusted[name] as unknown[]) : [];
      for (const [index, entry] of list.entries()) {
        if (index < known.length && isDeepStrictEqual(entry, known[index])) continue;
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
    if (walked !== undefined && walked.id >= (world.nextId as number))
      return `nextId is ${String(world.nextId)}, not above the ids in use (${walked.id}, at ${walked.at})`;
    return undefined;
  };
}
