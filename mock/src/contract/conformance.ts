// Checks one real answer against the document: a declared status, the declared required headers
// with valid values, and a body of a declared media type that validates. Shared by live mode
// (answers to its own requests) and the mock's proxy (answers to anyone's).
import type { ErrorObject } from 'ajv';
import { deref, isObject, pointer, type JsonObject, type Operation } from './document.js';
import type { SchemaValidator } from './schema.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** One way an answer breaks the document: where (`status 418`, `header Link`, `body /id`, `body /0/shiny_new_field:`, `content type`) and what. */
export interface Violation {
  where: string;
  problem: string;
  /**
   * How many violations it stands for, when more than one: the line that says how many
   * problems of a body were left out (`body: 3 more problems, not listed …`) stands for them.
   */
  count?: number;
}

/** A violation as one line, such as `body /id must be integer`. */
export function describeViolation({ where, problem }: Violation): string {
  return `${where} ${problem}`;
}

function mediaTypeOf(headers: Headers): string | undefined {
  return headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
}

/** The ways `answer` breaks `op`'s responses; `body: false` skips the body (one too large to read whole). */
export function mismatches(
  doc: JsonObject,
  schemas: SchemaValidator,
  op: Operation,
  answer: Answer,
  { body: checkBody = true } = {},
): Violation[] {
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const declared = Object.hasOwn(responses, String(answer.status))
    ? String(answer.status)
    : Object.hasOwn(responses, 'default')
      ? 'default'
      : undefined;
  if (declared === undefined)
    return [
      { where: `status ${answer.status}`, problem: `is not declared (declared: ${Object.keys(responses).join(', ')})` },
    ];
  const { value, location } = deref(doc, responses[declared], `${op.location}/responses/${declared}`);
  const response = value as JsonObject;
  const problems: Violation[] = [];

  for (const [name, header] of Object.entries(isObject(response.headers) ? response.headers : {})) {
    const resolved = deref(doc, header, `${location}/headers/${name}`);
    const spec = resolved.value as JsonObject;
    const actual = answer.headers.get(name);
    if (actual === null) {
      if (spec.required === true) problems.push({ where: `header ${name}`, problem: 'is required but missing' });
      continue;
    }
    const schema = spec.schema as JsonObject | undefined;
    const typed = schema?.type === 'integer' && /^-?\d+$/.test(actual) ? Number(actual) : actual;
    for (const problem of schemas.check(`${resolved.location}/schema`, typed))
      problems.push({ where: `header ${name}:`, problem });
  }
  if (!checkBody) return problems;

  const content = isObject(response.content) ? response.content : {};
  const types = Object.keys(content);
  if (types.length === 0) {
    if (answer.body !== '')
      problems.push({ where: `status ${answer.status}`, problem: 'declares no body, but one was sent' });
    return problems;
  }
  // `x-body-optional`: Gitea sends this status with no body at all in some cases (an empty 403).
  if (answer.body === '')
    return response['x-body-optional'] === true
      ? problems
      : [
          ...problems,
          { where: `status ${answer.status}`, problem: `declares a ${types.join(' or ')} body, but the body is empty` },
        ];
  const mediaType = mediaTypeOf(answer.headers);
  if (mediaType === undefined || !types.includes(mediaType))
    return [
      ...problems,
      { where: 'content type', problem: `${mediaType ?? '(none)'} is not declared (declared: ${types.join(', ')})` },
    ];
  const schemaAt = `${location}/content/${pointer([mediaType]).slice(1)}/schema`;
  let body: unknown = answer.body;
  if (mediaType.endsWith('json')) {
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...problems, { where: 'body', problem: 'is not valid JSON' }];
    }
  }
  return [...problems, ...bodyViolations(schemas, schemaAt, body)];
}

/** At most this many problems of one body: a list of 50 records with one new field would otherwise say it 50 times. */
const BODY_PROBLEMS = 6;

/**
 * `text` as it may go into one line: control characters escaped (a field name comes from the
 * server, and a newline in it would forge a line of its own), and cut short.
 */
function printable(text: string, max = 120): string {
  const escaped = text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return escaped.length > max ? `${escaped.slice(0, max)}…` : escaped;
}

/** The value at `instancePath` (a JSON pointer, as Ajv writes it) in `body`. */
function valueAt(body: unknown, instancePath: string): unknown {
  let value = body;
  for (const segment of instancePath.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * Ajv's errors of a body without the noise of `oneOf: [X, {type: 'null'}]`, the document's way of
 * writing "X or null": when X fails for a reason of its own (a field it does not know), Ajv also
 * says the value is not null and matches no branch, which names nothing. Those two go when
 * another error at or below the same place says more.
 */
function withoutBranchNoise(errors: readonly ErrorObject[]): ErrorObject[] {
  const noise = new Set<ErrorObject>();
  for (const union of errors) {
    if (union.keyword !== 'oneOf' && union.keyword !== 'anyOf') continue;
    const at = union.instancePath;
    const branches = errors.filter(
      (e) => e.keyword === 'type' && e.instancePath === at && e.schemaPath.startsWith(`${union.schemaPath}/`),
    );
    const specific = errors.some(
      (e) => e !== union && !branches.includes(e) && (e.instancePath === at || e.instancePath.startsWith(`${at}/`)),
    );
    if (!specific) continue;
    noise.add(union);
    for (const branch of branches) noise.add(branch);
  }
  return errors.filter((e) => !noise.has(e));
}

/**
 * One body error as a violation that names what broke, where: the unexpected field, the missing
 * one, the value no enum allows, each by its JSON pointer. Other errors keep Ajv's own words
 * (`body /id must be integer`).
 */
function describeBodyError(error: ErrorObject, body: unknown): Violation {
  const at = error.instancePath;
  const field = (name: unknown): string => printable(`${at}/${pointer([String(name)]).slice(1)}`);
  switch (error.keyword) {
    case 'additionalProperties':
      return {
        where: `body ${field(error.params.additionalProperty)}:`,
        problem: 'unexpected field (not in the document)',
      };
    case 'required':
      return { where: `body ${field(error.params.missingProperty)}:`, problem: 'missing (required by the document)' };
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ');
      return {
        where: `body ${printable(at) || '(root)'}:`,
        problem: `${printable(JSON.stringify(valueAt(body, at)) ?? 'undefined', 60)} is not an allowed value (allowed: ${printable(allowed, 300)})`,
      };
    }
    default:
      return { where: 'body', problem: `${printable(at) || '(root)'} ${error.message ?? error.keyword}` };
  }
}

/**
 * The ways `body` breaks the schema at `schemaAt`, each naming the place in the body; past
 * BODY_PROBLEMS, one more that says how many were left out and stands for them in the counts.
 */
export function bodyViolations(schemas: SchemaValidator, schemaAt: string, body: unknown): Violation[] {
  const validate = schemas.at(schemaAt);
  if (typeof validate === 'string')
    return [{ where: 'body', problem: `schema ${schemaAt} does not compile: ${validate}` }];
  if (validate(body)) return [];
  const errors = withoutBranchNoise(validate.errors ?? []);
  const listed = errors.slice(0, BODY_PROBLEMS).map((error) => describeBodyError(error, body));
  const more = errors.length - listed.length;
  return more === 0
    ? listed
    : [
        ...listed,
        {
          where: 'body:',
          problem: `${more} more problem${more > 1 ? 's' : ''}, not listed (at most ${BODY_PROBLEMS} are listed per body)`,
          count: more,
        },
      ];
}
