// Checks one real answer against the document: status, required headers and their values, media type and body.
import type { ErrorObject } from 'ajv';
import { deref, isObject, listOperations, pointer, type JsonObject, type Operation } from './document.js';
import { clip } from './exchange-report.js';
import { jsonShape, MAX_CHECKED_VALUES } from './json-shape.js';
import { createSchemaValidator, type SchemaValidator } from './schema.js';

/** What may not show in a violation: the caller's credentials, should the server echo them. */
type Redact = (text: string) => string;

export interface Answer {
  status: number;
  headers: Headers;
  body: string;
  /** The JSON body already parsed, where the caller has it (the mock's own answers). */
  value?: unknown;
}

/** One way an answer breaks the document: where (`status 418`, `header Link`, `body /id`, `content type`) and what. */
export interface Violation {
  where: string;
  problem: string;
  /** How many it stands for, when more than one (`body: 3 more problems, not listed …`). */
  count?: number;
}

export const describeViolation = ({ where, problem }: Violation): string => `${where} ${problem}`;

const responsesOf = (op: Operation): JsonObject => (isObject(op.operation.responses) ? op.operation.responses : {});

/** The response `op` declares for `status` (its own, else `default`), resolved, with where it stands. */
function declaredResponse(doc: JsonObject, op: Operation, status: number) {
  const responses = responsesOf(op);
  const code = [String(status), 'default'].find((each) => Object.hasOwn(responses, each));
  return code === undefined ? undefined : deref(doc, responses[code], `${op.location}/responses/${code}`);
}

/** Whether to check the body (not one too large to read whole), and what to redact before a quote is cut short. */
type CheckOptions = { body?: boolean; redact?: Redact };

export function mismatches(
  doc: JsonObject,
  schemas: SchemaValidator,
  op: Operation,
  answer: Answer,
  { body: checkBody = true, redact = (text: string) => text }: CheckOptions = {},
): Violation[] {
  const status = `status ${answer.status}`;
  const declared = declaredResponse(doc, op, answer.status);
  if (declared === undefined)
    return [{ where: status, problem: `is not declared (declared: ${Object.keys(responsesOf(op)).join(', ')})` }];
  const { value, location } = declared;
  const response = value as JsonObject;
  const declaredHeaders = Object.entries(isObject(response.headers) ? response.headers : {}).map(([name, header]) => {
    const resolved = deref(doc, header, `${location}/headers/${name}`);
    return { name, spec: resolved.value as JsonObject, location: resolved.location };
  });
  const problems = headerViolations(schemas, declaredHeaders, answer.headers);
  const and = (where: string, problem: string): Violation[] => [...problems, { where, problem }];
  const types = Object.keys(isObject(response.content) ? response.content : {});
  if (!checkBody || (types.length === 0 && answer.body === '')) return problems;
  if (types.length === 0) return and(status, 'declares no body, but one was sent');
  // `x-body-optional`: Gitea sends this status with no body at all in some cases (an empty 403).
  if (answer.body === '')
    return response['x-body-optional'] === true
      ? problems
      : and(status, `declares a ${types.join(' or ')} body, but the body is empty`);
  const mediaType = answer.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType === undefined || !types.includes(mediaType))
    return and('content type', `${mediaType ?? '(none)'} is not declared (declared: ${types.join(', ')})`);
  const schemaAt = `${location}/content/${pointer([mediaType]).slice(1)}/schema`;
  let body: unknown = answer.body;
  if (mediaType.endsWith('json') && 'value' in answer) body = answer.value;
  else if (mediaType.endsWith('json')) {
    try {
      body = JSON.parse(answer.body);
    } catch {
      return and('body', 'is not valid JSON');
    }
  }
  return [...problems, ...bodyViolations(schemas, schemaAt, body, redact)];
}

/** The one check of answers against `doc`, the proxy's and the mock's own, and its shape of a body: its Ajv made on first use. */
export function answerChecks(doc: JsonObject) {
  let made: { schemas: SchemaValidator; operations: Map<string, Operation> } | undefined;
  const parts = () =>
    (made ??= {
      schemas: createSchemaValidator(doc),
      operations: new Map(listOperations(doc).map((op) => [String(op.operation.operationId), op])),
    });
  return {
    check(operationId: string, answer: Answer, options?: CheckOptions): Violation[] {
      const { schemas, operations } = parts();
      const op = operations.get(operationId);
      return op ? mismatches(doc, schemas, op, answer, options) : [];
    },
    /** A JSON body as `doc` shapes the records of its status: a profile's, where the sandbox's model holds more. */
    fit<T>(operationId: string, status: number, body: T): T {
      const { schemas, operations } = parts();
      const op = operations.get(operationId);
      const declared = op && declaredResponse(doc, op, status);
      return declared ? schemas.fitted(`${declared.location}/content/application~1json/schema`, body) : body;
    },
  };
}

/** How `headers` break the headers declared: a required one missing, or a value its schema refuses. */
export function headerViolations(
  schemas: SchemaValidator,
  declared: readonly { name: string; spec: JsonObject; location: string }[],
  headers: Headers,
): Violation[] {
  const problems: Violation[] = [];
  for (const { name, spec, location } of declared) {
    const actual = headers.get(name);
    if (actual === null) {
      if (spec.required === true) problems.push({ where: `header ${name}`, problem: 'is required but missing' });
      continue;
    }
    // A header is text: one declared an integer is read as the number it writes.
    const schema = spec.schema as JsonObject | undefined;
    const typed = schema?.type === 'integer' && /^-?\d+$/.test(actual) ? Number(actual) : actual;
    for (const problem of schemas.check(`${location}/schema`, typed))
      problems.push({ where: `header ${name}:`, problem });
  }
  return problems;
}

/** At most this many problems of one body: a list of 50 records with one new field would otherwise say it 50 times. */
const BODY_PROBLEMS = 6;

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const escaped = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
/** `text` for one line: control characters escaped (a newline in a server's field name would forge a line), cut short. */
const printable = (text: string, max = 120): string => clip(text.replace(CONTROL, escaped), max);

/** The JSON of `value` to its first `max` characters or a little past, each string redacted whole: a value of megabytes costs no more. */
function preview(value: unknown, max: number, redact: Redact): string {
  if (typeof value !== 'object' || value === null) {
    const text = typeof value === 'string' ? JSON.stringify(redact(value)) : (JSON.stringify(value) ?? 'undefined');
    return text.slice(0, max + 1);
  }
  const array = Array.isArray(value);
  let out = array ? '[' : '{';
  /** Writes a member; true once past `max` (bodies are at most 64 deep, so the recursion is too). */
  const member = (key: string, item: unknown): boolean => {
    out += `${out.length > 1 ? ',' : ''}${array ? '' : `${JSON.stringify(redact(key))}:`}`;
    if (out.length <= max) out += preview(item, max - out.length, redact);
    return out.length > max;
  };
  if (array) {
    for (let i = 0; i < value.length; i++) if (member('', value[i])) return out;
  } else for (const key in value) if (member(key, (value as Record<string, unknown>)[key])) return out;
  return `${out}${array ? ']' : '}'}`;
}

/** Ajv's errors without the union's and the null branch's of "X or null" where another error at or below says more. */
function withoutBranchNoise(errors: readonly ErrorObject[]): ErrorObject[] {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const place = error.instancePath;
    (byPlace.get(place) ?? byPlace.set(place, []).get(place)!).push(error);
  }
  const above = new Set<string>();
  for (const place of byPlace.keys()) {
    const parts = place.split('/');
    for (let i = 1; i < parts.length; i++) above.add(parts.slice(0, i).join('/'));
  }
  const noise = new Set<ErrorObject>();
  for (const union of errors) {
    if (union.keyword !== 'oneOf' && union.keyword !== 'anyOf') continue;
    const here = byPlace.get(union.instancePath)!;
    const branches = here.filter((e) => e.keyword === 'type' && e.schemaPath.startsWith(`${union.schemaPath}/`));
    if (here.length - 1 - branches.length === 0 && !above.has(union.instancePath)) continue;
    noise.add(union);
    for (const branch of branches) noise.add(branch);
  }
  return errors.filter((e) => !noise.has(e));
}

/** One body error naming what broke by its JSON pointer (an unexpected field, a missing one, a value no enum allows), else in Ajv's words. */
function describeBodyError(error: ErrorObject, redact: Redact): Violation {
  const at = error.instancePath;
  const shown = (text: string): string => printable(redact(text));
  const field = (name: unknown): string => `body ${shown(`${at}/${pointer([String(name)]).slice(1)}`)}:`;
  switch (error.keyword) {
    case 'additionalProperties':
      return { where: field(error.params.additionalProperty), problem: 'unexpected field (not in the document)' };
    case 'required':
      return { where: field(error.params.missingProperty), problem: 'missing (required by the document)' };
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ');
      const value = printable(preview(error.data, 60, redact), 60);
      return {
        where: `body ${shown(at) || '(root)'}:`,
        problem: `${value} is not an allowed value (allowed: ${printable(allowed, 300)})`,
      };
    }
    default:
      return { where: 'body', problem: `${shown(at) || '(root)'} ${error.message ?? error.keyword}` };
  }
}

/** Deepest nesting of a body checked: the service's answers nest a handful of levels, and the checks recurse as deep as a value goes. */
const MAX_DEPTH = 64;

/** The ways `body` breaks its schema; past MAX_CHECKED_VALUES values its first problem only (millions take GBs). */
export function bodyViolations(schemas: SchemaValidator, schemaAt: string, body: unknown, redact: Redact): Violation[] {
  const shape = jsonShape(body, MAX_CHECKED_VALUES, MAX_DEPTH);
  const deep = `nests deeper than ${MAX_DEPTH} levels, far deeper than any answer the document describes`;
  if (shape.depth > MAX_DEPTH) return [{ where: 'body', problem: deep }];
  const large = shape.values > MAX_CHECKED_VALUES;
  const validate = large ? schemas.firstProblemAt(schemaAt) : schemas.at(schemaAt);
  if (typeof validate === 'string')
    return [{ where: 'body', problem: `schema ${schemaAt} does not compile: ${validate}` }];
  if (validate(body)) return [];
  const errors = withoutBranchNoise(validate.errors ?? []);
  const listed = errors.slice(0, BODY_PROBLEMS).map((error) => describeBodyError(error, redact));
  if (large) {
    const problem = `more problems may follow, not looked for (it holds more than ${MAX_CHECKED_VALUES} values, and past that only its first problem is named)`;
    return [...listed.slice(0, 1), { where: 'body:', problem }];
  }
  const more = errors.length - listed.length;
  if (more === 0) return listed;
  const problem = `${more} more problem${more > 1 ? 's' : ''}, not listed (at most ${BODY_PROBLEMS} are listed per body)`;
  return [...listed, { where: 'body:', problem, count: more }];
}
