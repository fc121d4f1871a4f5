// Checks openapi.yaml against every fact of the seed (the service description), as copied into
// test/seed-facts.json. One test per record and per operation; each collects all its problems so
// a failure lists every missing or mistyped fact at once.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  deref,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  operationParameters,
  pointer,
  resolvePointer,
  tryLoadDocument,
} from './support/mock-internals.js';

// ---------------------------------------------------------------- the facts table

interface FieldSpec {
  type?: string;
  format?: string;
  enum?: Json[];
  default?: Json;
  deprecated?: boolean;
  uniqueItems?: boolean;
  ref?: string;
  items?: FieldSpec;
  additionalProperties?: FieldSpec;
}
interface ParamSpec extends FieldSpec {
  name: string;
  in: string;
  required?: boolean;
}
interface BodySpec {
  schema: string;
  mediaType: string;
  fields: Record<string, FieldSpec>;
  required: string[];
}
interface ReturnSpec {
  ref?: string;
  arrayOf?: string;
  mediaType?: string;
  type?: string;
  empty?: boolean;
  case?: string;
}
interface OperationSpec {
  summary?: string;
  note?: string;
  method: string;
  path: string;
  parameters: ParamSpec[];
  body?: BodySpec;
  returns: ReturnSpec | ReturnSpec[];
  errors: string[];
}
interface RecordSpec {
  fields: Record<string, FieldSpec>;
  notFields?: string[];
}
interface SeedFacts {
  service: { basePath: string; authorization: string };
  records: Record<string, RecordSpec>;
  operations: Record<string, OperationSpec>;
}

const facts = JSON.parse(readFileSync(new URL('./seed-facts.json', import.meta.url), 'utf8')) as SeedFacts;

// Status codes are not in the seed ("HTTP status codes for each response: not shown"); these
// come from the real service, so they live here rather than in the facts table.
const SUCCESS_STATUS: Record<string, string[]> = {
  E1: ['200'],
  E2: ['201'],
  E3: ['201'],
  E4: ['200'],
  E5: ['201'],
  E6: ['201'],
  E7: ['200'],
  E8: ['205'],
  E9: ['200'],
  E10: ['200'],
  E11: ['200'],
  E12: ['200'],
  E13: ['200'],
  E14: ['201', '204'],
  E15: ['200'],
  E16: ['201'],
  E17: ['200'],
  E18: ['204'],
  E19: ['200'],
  E20: ['204'],
};
const ERROR_STATUS: Record<string, string[]> = {
  forbidden: ['403'],
  'not-found': ['404'],
  validation: ['422'],
  'name conflict': ['409'],
};
// "generic error" is whatever the real handler answers for that operation.
const GENERIC_ERROR_STATUS: Record<string, string[]> = {
  E2: ['400'],
  E13: ['400', '500'],
  E14: ['400'],
  E16: ['400', '413'],
  E17: ['404'],
};

// ---------------------------------------------------------------- counting

// A fact is one attribute of a field or parameter (type, format, enum, ...), one required body
// field, one body media type or schema name, one success response, one named error, one
// operation's existence, one field the seed says is absent, or one service-wide statement.
function fieldFactCount(spec: FieldSpec): number {
  let n = 0;
  for (const [key, value] of Object.entries(spec)) {
    n += key === 'items' || key === 'additionalProperties' ? fieldFactCount(value as FieldSpec) : 1;
  }
  return n;
}
function paramFactCount(spec: ParamSpec): number {
  const { name: _name, ...rest } = spec;
  return fieldFactCount(rest);
}
function bodyFactCount(spec: BodySpec): number {
  return 2 + Object.values(spec.fields).reduce((n, f) => n + fieldFactCount(f), 0) + spec.required.length;
}
function returnsList(spec: OperationSpec): ReturnSpec[] {
  return Array.isArray(spec.returns) ? spec.returns : [spec.returns];
}
function operationFactCount(spec: OperationSpec): number {
  return (
    1 +
    spec.parameters.reduce((n, p) => n + paramFactCount(p), 0) +
    (spec.body ? bodyFactCount(spec.body) : 0) +
    returnsList(spec).length +
    spec.errors.length
  );
}
function recordFactCount(spec: RecordSpec): number {
  return Object.values(spec.fields).reduce((n, f) => n + fieldFactCount(f), 0) + (spec.notFields?.length ?? 0);
}
function tableFactCount(table: SeedFacts): number {
  return (
    Object.keys(table.service).length +
    Object.values(table.records).reduce((n, r) => n + recordFactCount(r), 0) +
    Object.values(table.operations).reduce((n, o) => n + operationFactCount(o), 0)
  );
}

// Incremented once per fact actually checked, pass or fail.
let checked = 0;

class Problems {
  readonly list: string[] = [];
  /** Records one checked fact; `problem` is undefined when it holds. */
  fact(problem: string | undefined): void {
    checked += 1;
    if (problem !== undefined) this.list.push(problem);
  }
  /** A container is missing: every fact under it is checked and fails with one message. */
  missing(count: number, message: string): void {
    checked += count;
    if (count > 0) this.list.push(message);
  }
  note(message: string): void {
    this.list.push(message);
  }
}

// ---------------------------------------------------------------- the document

const loaded = tryLoadDocument(new URL('../openapi.yaml', import.meta.url));
const doc = loaded.doc;

const schemaRef = (name: string): string => `#/components/schemas/${name}`;
const show = (value: unknown): string => JSON.stringify(value) ?? 'undefined';

function isNullSchema(s: Json | undefined): boolean {
  if (!isObject(s)) return false;
  if (s.type === 'null') return true;
  if (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === 'null') return true;
  return s.const === null || (Array.isArray(s.enum) && s.enum.length === 1 && s.enum[0] === null);
}

/**
 * How the document may write one field: `{type, format}`, `type: [T, 'null']`, a `$ref` (with
 * sibling annotations), or `oneOf`/`anyOf`/`allOf` with one non-null member. `layers` are the
 * schema objects passed through, outermost first; `ref` is the first `$ref` met.
 */
interface SchemaView {
  layers: JsonObject[];
  ref?: string;
}
function viewSchema(schema: Json | undefined): SchemaView {
  const view: SchemaView = { layers: [] };
  let current = schema;
  for (let depth = 0; depth < 16 && isObject(current); depth++) {
    view.layers.push(current);
    let next: Json | undefined;
    for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
      const members = current[key];
      if (!Array.isArray(members)) continue;
      const nonNull = members.filter((m) => !isNullSchema(m));
      if (nonNull.length === 1) next = nonNull[0];
    }
    if (next === undefined && typeof current.$ref === 'string') {
      view.ref ??= current.$ref;
      next = resolvePointer(doc, current.$ref);
    }
    if (next === undefined) break;
    current = next;
  }
  return view;
}
/** The outermost value of a keyword across the layers (annotations may sit beside a $ref). */
function keyword(view: SchemaView, key: string): Json | undefined {
  for (const layer of view.layers) if (Object.hasOwn(layer, key)) return layer[key];
  return undefined;
}
function nonNullTypes(type: Json | undefined): string[] | undefined {
  if (typeof type === 'string') return type === 'null' ? [] : [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string' && t !== 'null');
  return undefined;
}
const canonical = (value: Json | undefined): string => show(value);

/** Checks every attribute of one field spec against the schema the document gives the field. */
function checkField(p: Problems, where: string, schema: Json | undefined, spec: FieldSpec): void {
  if (!isObject(schema)) {
    p.missing(fieldFactCount(spec), `${where}: missing`);
    return;
  }
  const view = viewSchema(schema);
  for (const [key, expected] of Object.entries(spec) as [string, Json][]) {
    switch (key) {
      case 'ref': {
        const want = schemaRef(String(expected));
        p.fact(view.ref === want ? undefined : `${where}: should be a $ref to ${want}, is ${show(schema)}`);
        break;
      }
      case 'type': {
        const types = nonNullTypes(keyword(view, 'type'));
        p.fact(
          types && types.length === 1 && types[0] === expected
            ? undefined
            : `${where}: type is ${show(keyword(view, 'type'))}, seed says ${show(expected)}`,
        );
        break;
      }
      case 'format':
      case 'default': {
        const actual = keyword(view, key);
        p.fact(
          canonical(actual) === canonical(expected)
            ? undefined
            : `${where}: ${key} is ${show(actual)}, seed says ${show(expected)}`,
        );
        break;
      }
      case 'deprecated':
      case 'uniqueItems': {
        // `deprecated` may sit on any layer (e.g. beside a $ref); uniqueItems on the value schema.
        const actual =
          key === 'deprecated' ? view.layers.some((l) => l.deprecated === true) : keyword(view, key) === true;
        p.fact(actual === expected ? undefined : `${where}: ${key} should be ${show(expected)}`);
        break;
      }
      case 'enum': {
        const actual = keyword(view, 'enum');
        const want = new Set((expected as Json[]).map(canonical));
        // The seed lists the values a field takes; "no value" is not one of them. Whether the
        // server writes a missing value as null or as the empty string (a commit's notification
        // state, a tracker style never set) is the real service's fact, so both are left out.
        const have = Array.isArray(actual)
          ? new Set(actual.filter((v) => v !== null && v !== '').map(canonical))
          : undefined;
        const same = have !== undefined && have.size === want.size && [...want].every((v) => have.has(v));
        p.fact(same ? undefined : `${where}: enum is ${show(actual)}, seed says ${show(expected)}`);
        break;
      }
      case 'items':
      case 'additionalProperties': {
        const sub = keyword(view, key);
        checkField(p, `${where}.${key === 'items' ? '[]' : '{*}'}`, sub, expected as FieldSpec);
        break;
      }
      default:
        p.fact(`${where}: facts table has unknown key ${show(key)}`);
    }
  }
}

/** Properties of an object schema, including those of `allOf` members. */
function properties(schema: Json | undefined, base: string): Map<string, { schema: Json; location: string }> {
  const result = new Map<string, { schema: Json; location: string }>();
  const visit = (s: Json | undefined, location: string, depth: number): void => {
    if (!isObject(s) || depth > 8) return;
    if (typeof s.$ref === 'string') visit(resolvePointer(doc, s.$ref), s.$ref.slice(1), depth + 1);
    if (isObject(s.properties)) {
      for (const [name, prop] of Object.entries(s.properties)) {
        if (!result.has(name)) result.set(name, { schema: prop, location: `${location}/properties/${name}` });
      }
    }
    if (Array.isArray(s.allOf)) for (const [i, m] of s.allOf.entries()) visit(m, `${location}/allOf/${i}`, depth + 1);
  };
  visit(schema, base, 0);
  return result;
}
function requiredNames(schema: Json | undefined): Set<string> {
  const result = new Set<string>();
  const visit = (s: Json | undefined, depth: number): void => {
    if (!isObject(s) || depth > 8) return;
    if (typeof s.$ref === 'string') visit(resolvePointer(doc, s.$ref), depth + 1);
    if (Array.isArray(s.required)) for (const r of s.required) if (typeof r === 'string') result.add(r);
    if (Array.isArray(s.allOf)) for (const m of s.allOf) visit(m, depth + 1);
  };
  visit(schema, 0);
  return result;
}

function checkFields(
  p: Problems,
  owner: string,
  schema: Json | undefined,
  base: string,
  fields: Record<string, FieldSpec>,
): void {
  const props = properties(schema, base);
  for (const [name, spec] of Object.entries(fields)) {
    const prop = props.get(name);
    checkField(p, `${owner}.${name} (#${prop?.location ?? `${base}/properties/${name}`})`, prop?.schema, spec);
  }
}

// ---------------------------------------------------------------- records

function checkRecord(name: string, spec: RecordSpec): string[] {
  const p = new Problems();
  const base = pointer(['components', 'schemas', name]);
  const schema = resolvePointer(doc, `#${base}`);
  if (!isObject(schema)) {
    p.missing(recordFactCount(spec), `${name}: no schema at #${base}`);
    return p.list;
  }
  checkFields(p, name, schema, base, spec.fields);
  const props = properties(schema, base);
  for (const absent of spec.notFields ?? []) {
    p.fact(props.has(absent) ? `${name}.${absent}: the seed says this is not a field` : undefined);
  }
  return p.list;
}

// ---------------------------------------------------------------- operations

function responseAt(
  responses: JsonObject,
  status: string,
  base: string,
): { value: JsonObject; location: string } | undefined {
  if (!Object.hasOwn(responses, status)) return undefined;
  const r = deref(doc, responses[status], `${base}/${status}`);
  return isObject(r.value) ? { value: r.value, location: r.location } : undefined;
}

function checkReturn(
  p: Problems,
  id: string,
  spec: ReturnSpec,
  status: string | undefined,
  responses: JsonObject,
  base: string,
): void {
  const label = `${id} returns${spec.case ? ` (${spec.case})` : ''}`;
  if (status === undefined) {
    p.fact(`${label}: no success status mapped in the test`);
    return;
  }
  const response = responseAt(responses, status, base);
  if (!response) {
    p.fact(`${label}: no ${status} response at #${base}`);
    return;
  }
  const content = isObject(response.value.content) ? response.value.content : {};
  const where = `#${response.location}`;
  if (spec.empty) {
    const types = Object.keys(content);
    p.fact(
      types.length === 0 ? undefined : `${label}: ${status} should have no body, has ${types.join(', ')} (${where})`,
    );
    return;
  }
  const mediaType = spec.mediaType ?? 'application/json';
  const media = content[mediaType];
  const schema = isObject(media) ? media.schema : undefined;
  if (!isObject(schema)) {
    p.fact(`${label}: ${status} has no ${mediaType} schema (${where}/content)`);
    return;
  }
  if (spec.ref !== undefined) {
    p.fact(
      schema.$ref === schemaRef(spec.ref)
        ? undefined
        : `${label}: ${status} ${mediaType} schema should be a $ref to ${schemaRef(spec.ref)}, is ${show(schema)}`,
    );
  } else if (spec.arrayOf !== undefined) {
    const view = viewSchema(schema);
    const types = nonNullTypes(keyword(view, 'type')) ?? [];
    const items = keyword(view, 'items');
    const ok = types.includes('array') && isObject(items) && items.$ref === schemaRef(spec.arrayOf);
    p.fact(
      ok
        ? undefined
        : `${label}: ${status} ${mediaType} schema should be an array of ${schemaRef(spec.arrayOf)}, is ${show(schema)}`,
    );
  } else if (spec.type !== undefined) {
    const types = nonNullTypes(keyword(viewSchema(schema), 'type'));
    p.fact(
      types?.length === 1 && types[0] === spec.type
        ? undefined
        : `${label}: ${status} ${mediaType} schema should be type ${spec.type}, is ${show(schema)}`,
    );
  } else {
    p.fact(`${label}: facts table entry ${show(spec)} has nothing to check`);
  }
}

function checkOperation(id: string, spec: OperationSpec): string[] {
  const p = new Problems();
  const op = listOperations(doc).find((o) => o.path === spec.path && o.method === spec.method);
  if (!op) {
    p.missing(operationFactCount(spec), `${id}: no ${spec.method.toUpperCase()} ${spec.path} in paths`);
    return p.list;
  }
  p.fact(undefined); // the operation exists

  // Parameters: matched by name, so a parameter in the wrong place is reported as such.
  const params = operationParameters(doc, op);
  for (const ps of spec.parameters) {
    const { name, in: where, required, ...schemaSpec } = ps;
    const found =
      params.find((x) => x.param.name === name && x.param.in === where) ?? params.find((x) => x.param.name === name);
    const label = `${id} parameter ${name}`;
    if (!found) {
      p.missing(paramFactCount(ps), `${label}: missing (seed: in ${where})`);
      continue;
    }
    const loc = `#${found.location}`;
    p.fact(found.param.in === where ? undefined : `${label}: in ${show(found.param.in)}, seed says ${where} (${loc})`);
    if (required !== undefined) {
      const actual = found.param.required === true;
      p.fact(
        actual === required
          ? undefined
          : `${label}: required is ${show(found.param.required)}, seed says ${required} (${loc})`,
      );
    }
    checkField(p, `${label} (${loc}/schema)`, found.param.schema, schemaSpec);
  }

  // Request body: inline, or a $ref to components/requestBodies.
  if (spec.body) {
    const body = deref(doc, op.operation.requestBody, `${op.location}/requestBody`);
    const b = spec.body;
    if (!isObject(body.value)) {
      p.missing(bodyFactCount(b), `${id} body: no requestBody at #${op.location}`);
    } else {
      const content = isObject(body.value.content) ? body.value.content : {};
      const media = content[b.mediaType];
      p.fact(
        isObject(media)
          ? undefined
          : `${id} body: no ${b.mediaType} content, has ${show(Object.keys(content))} (#${body.location})`,
      );
      const schema = isObject(media) ? media.schema : undefined;
      const view = viewSchema(schema);
      p.fact(
        view.ref === schemaRef(b.schema)
          ? undefined
          : `${id} body: schema should be a $ref to ${schemaRef(b.schema)}, is ${show(schema)}`,
      );
      // Fields are read from whatever schema is there, so a misnamed schema still gets its fields checked.
      const base = view.ref?.slice(1) ?? `${body.location}/content/${b.mediaType}/schema`;
      checkFields(p, `${id} body ${b.schema}`, schema, base, b.fields);
      const required = requiredNames(schema);
      for (const r of b.required) {
        p.fact(required.has(r) ? undefined : `${id} body ${b.schema}.${r}: should be required (#${base}/required)`);
      }
    }
  }

  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const responsesAt = `${op.location}/responses`;
  const statuses = SUCCESS_STATUS[id] ?? [];
  for (const [i, r] of returnsList(spec).entries()) checkReturn(p, id, r, statuses[i], responses, responsesAt);

  for (const name of spec.errors) {
    const mapped = name === 'generic error' ? GENERIC_ERROR_STATUS[id] : ERROR_STATUS[name];
    if (!mapped) {
      p.fact(`${id} error "${name}": no status mapped in the test`);
      continue;
    }
    const absent = mapped.filter((s) => !responseAt(responses, s, responsesAt));
    p.fact(
      absent.length === 0 ? undefined : `${id} error "${name}": no ${absent.join(', ')} response at #${responsesAt}`,
    );
  }
  return p.list;
}

// ---------------------------------------------------------------- service-wide

function checkService(): string[] {
  const p = new Problems();
  const { basePath, authorization } = facts.service;

  const servers = Array.isArray(doc.servers) ? doc.servers.filter(isObject) : [];
  const wrong = servers.map((s) => String(s.url)).filter((u) => !u.replace(/\/+$/, '').endsWith(basePath));
  p.fact(
    servers.length > 0 && wrong.length === 0
      ? undefined
      : servers.length === 0
        ? `servers: none; the seed's {base_url} ends with ${basePath}`
        : `servers: ${wrong.join(', ')} should end with ${basePath}`,
  );

  // "Every operation is called with an Authorization header using the Basic scheme."
  const components = isObject(doc.components) ? doc.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const basic = new Set(
    Object.entries(schemes)
      .filter(([, s]) => isObject(s) && s.type === 'http' && String(s.scheme).toLowerCase() === authorization)
      .map(([name]) => name),
  );
  const lacking: string[] = [];
  for (const o of Object.values(facts.operations)) {
    const op = listOperations(doc).find((x) => x.path === o.path && x.method === o.method);
    if (!op) continue; // reported by the operation's own test
    const security = op.operation.security ?? doc.security;
    const ok =
      Array.isArray(security) && security.some((req) => isObject(req) && Object.keys(req).some((k) => basic.has(k)));
    if (!ok) lacking.push(`${o.method.toUpperCase()} ${o.path}`);
  }
  p.fact(
    basic.size === 0
      ? `components/securitySchemes: no http scheme "${authorization}"`
      : lacking.length > 0
        ? `security: ${lacking.join('; ')} do not accept the ${authorization} scheme`
        : undefined,
  );
  return p.list;
}

// ---------------------------------------------------------------- tests

/** A document that failed to load is the one problem worth reading; the rest would be noise. */
function report(list: string[]): string[] {
  return loaded.error !== undefined ? [`openapi.yaml could not be loaded: ${loaded.error}`] : list;
}

describe('openapi.yaml states every fact of the seed', () => {
  afterAll(() => {
    console.log(`seed conformance: ${checked} facts checked (table: ${tableFactCount(facts)})`);
  });

  it('service (base path, authentication)', () => {
    expect(report(checkService())).toEqual([]);
  });

  for (const [name, spec] of Object.entries(facts.records)) {
    it(`record ${name}`, () => {
      expect(report(checkRecord(name, spec))).toEqual([]);
    });
  }

  for (const [id, spec] of Object.entries(facts.operations)) {
    it(`${id} ${spec.method.toUpperCase()} ${spec.path}`, () => {
      expect(report(checkOperation(id, spec))).toEqual([]);
    });
  }

  // Runs last (tests in a file run in order): proves no fact was skipped silently.
  it('every fact in seed-facts.json was checked', () => {
    expect(checked).toBe(tableFactCount(facts));
  });
});
