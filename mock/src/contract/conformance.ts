// Checks one real answer against the document: a declared status, the declared required headers
// with valid values, and a body of a declared media type that validates. Shared by live mode
// (answers to its own requests) and the mock's proxy (answers to anyone's).
import { deref, isObject, pointer, type JsonObject, type Operation } from './document.js';
import type { SchemaValidator } from './schema.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** One way an answer breaks the document: where (`status 418`, `header Link`, `body /id`, `content type`) and what. */
export interface Violation {
  where: string;
  problem: string;
}

/** A violation as one line, such as `body /id must be integer`. */
export function describeViolation({ where, problem }: Violation): string {
  return `${where} ${problem}`;
}

function mediaTypeOf(headers: Headers): string | undefined {
  return headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
}

/** The ways `answer` breaks `op`'s responses; `body: false` skips the body (one too large to read whole). */
export function mismatches(doc: JsonObject, schemas: SchemaValidator, op: Operation, answer: Answer, { body: checkBody = true } = {}): Violation[] {
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const declared = Object.hasOwn(responses, String(answer.status)) ? String(answer.status) : Object.hasOwn(responses, 'default') ? 'default' : undefined;
  if (declared === undefined) return [{ where: `status ${answer.status}`, problem: `is not declared (declared: ${Object.keys(responses).join(', ')})` }];
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
    for (const problem of schemas.check(`${resolved.location}/schema`, typed)) problems.push({ where: `header ${name}:`, problem });
  }
  if (!checkBody) return problems;

  const content = isObject(response.content) ? response.content : {};
  const types = Object.keys(content);
  if (types.length === 0) {
    if (answer.body !== '') problems.push({ where: `status ${answer.status}`, problem: 'declares no body, but one was sent' });
    return problems;
  }
  // `x-body-optional`: Gitea sends this status with no body at all in some cases (an empty 403).
  if (answer.body === '') return response['x-body-optional'] === true ? problems : [...problems, { where: `status ${answer.status}`, problem: `declares a ${types.join(' or ')} body, but the body is empty` }];
  const mediaType = mediaTypeOf(answer.headers);
  if (mediaType === undefined || !types.includes(mediaType)) return [...problems, { where: 'content type', problem: `${mediaType ?? '(none)'} is not declared (declared: ${types.join(', ')})` }];
  const schemaAt = `${location}/content/${pointer([mediaType]).slice(1)}/schema`;
  let body: unknown = answer.body;
  if (mediaType.endsWith('json')) {
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...problems, { where: 'body', problem: 'is not valid JSON' }];
    }
  }
  for (const problem of schemas.check(schemaAt, body)) problems.push({ where: 'body', problem });
  return problems;
}
