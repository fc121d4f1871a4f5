// Checks one real answer against the document: a declared status, the declared required
// headers with valid values, and a body of a declared media type that validates.
import { deref, isObject, pointer, type JsonObject, type Operation } from '../../test/support/document.js';
import type { SchemaValidator } from '../../test/support/schema.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

function mediaTypeOf(headers: Headers): string | undefined {
  return headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
}

export function mismatches(doc: JsonObject, schemas: SchemaValidator, op: Operation, answer: Answer): string[] {
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const declared = Object.hasOwn(responses, String(answer.status)) ? String(answer.status) : Object.hasOwn(responses, 'default') ? 'default' : undefined;
  if (declared === undefined) return [`status ${answer.status} is not declared (declared: ${Object.keys(responses).join(', ')})`];
  const { value, location } = deref(doc, responses[declared], `${op.location}/responses/${declared}`);
  const response = value as JsonObject;
  const problems: string[] = [];

  for (const [name, header] of Object.entries(isObject(response.headers) ? response.headers : {})) {
    const resolved = deref(doc, header, `${location}/headers/${name}`);
    const spec = resolved.value as JsonObject;
    const actual = answer.headers.get(name);
    if (actual === null) {
      if (spec.required === true) problems.push(`header ${name} is required but missing`);
      continue;
    }
    const schema = spec.schema as JsonObject | undefined;
    const typed = schema?.type === 'integer' && /^-?\d+$/.test(actual) ? Number(actual) : actual;
    for (const problem of schemas.check(`${resolved.location}/schema`, typed)) problems.push(`header ${name}: ${problem}`);
  }

  const content = isObject(response.content) ? response.content : {};
  const types = Object.keys(content);
  if (types.length === 0) {
    if (answer.body !== '') problems.push(`status ${answer.status} declares no body, but one was sent`);
    return problems;
  }
  if (answer.body === '') return [...problems, `status ${answer.status} declares a ${types.join(' or ')} body, but the body is empty`];
  const mediaType = mediaTypeOf(answer.headers);
  if (mediaType === undefined || !types.includes(mediaType)) return [...problems, `content type ${mediaType ?? '(none)'} is not declared (declared: ${types.join(', ')})`];
  const schemaAt = `${location}/content/${pointer([mediaType]).slice(1)}/schema`;
  let body: unknown = answer.body;
  if (mediaType.endsWith('json')) {
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...problems, 'the body is not valid JSON'];
    }
  }
  for (const problem of schemas.check(schemaAt, body)) problems.push(`body ${problem}`);
  return problems;
}
