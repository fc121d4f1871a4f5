// The check of a world read from a state folder, before the sandbox answers from it: the world's
// own fields, every collection a list of entries of the right shape, and every record valid
// against its schema in the document (the answers are built from records, and an answer that
// breaks the document is a 500). Records are kept in the shape the API answers with, so the
// document's schemas are the records' shapes.
import { readDocumentFile } from '../contract/document-file.js';
import { createSchemaValidator } from '../contract/schema.js';
import { WORLD_FORMAT } from './world.js';

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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

/** Says what is wrong with a world, or undefined when it is one the sandbox can answer from. */
export type WorldCheck = (world: unknown) => string | undefined;

/** A check against the schemas of `document` (an openapi.yaml), which it loads with Ajv. */
export function createWorldCheck(document: string): WorldCheck {
  const schemas = createSchemaValidator(readDocumentFile(document).document);
  if (schemas.error !== undefined) throw new Error(schemas.error);

  const recordProblem = (schema: string, value: unknown, where: string): string | undefined => {
    if (!isObject(value)) return `${where} is ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}, not a record`;
    const [problem] = schemas.check(`/components/schemas/${schema}`, value);
    return problem === undefined ? undefined : `${where} is not a ${schema}: ${problem}`;
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

  return (world) => {
    if (!isObject(world)) return 'it is not a JSON object';
    if (world.format !== WORLD_FORMAT) return `its format is ${JSON.stringify(world.format)}, not ${WORLD_FORMAT}`;
    if (!isId(world.nextId) || (world.nextId as number) < 1) return 'nextId is not a positive id';
    if (!isId(world.created)) return 'created is not a count';
    for (const [name, shape] of Object.entries(COLLECTIONS)) {
      const list = world[name];
      if (!Array.isArray(list)) return `${name} is not a list`;
      for (const [index, entry] of list.entries()) {
        const where = `${name}[${index}]`;
        const problem =
          typeof shape === 'string'
            ? recordProblem(shape, entry, where)
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
    return undefined;
  };
}
