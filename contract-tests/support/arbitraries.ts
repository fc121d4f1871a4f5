// fast-check arbitraries read from the document's request schemas, and single-constraint
// mutations of valid requests. Covers the JSON Schema the document uses: objects, arrays,
// strings (enum, pattern, length, formats), integers (range), booleans, nullable types, $ref.
import fc from 'fast-check';
import { isObject, type Json, type JsonObject, resolvePointer } from '../../test/support/mock-internals.js';

type Schema = JsonObject;

function resolve(doc: JsonObject, schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === 'string') current = resolvePointer(doc, current.$ref) as Schema;
  return current;
}

function typesOf(schema: Schema): string[] {
  return Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
}

/**
 * Web URLs for `format: uri` fields: http(s), a domain, a path of plain and percent-encoded
 * segments. Not fc.webUrl(): making one builds a table of every Unicode character for its percent
 * encodings, a second of CPU per test process, where a few encoded characters serve as well.
 */
const webUrl: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('http', 'https'),
    fc.domain(),
    fc.array(
      fc.oneof(
        fc.stringMatching(/^[a-zA-Z0-9._~-]{1,8}$/),
        fc.constantFrom('%20', '%C3%A9t%C3%A9', '%F0%9F%9A%80', 'a%2Fb'),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([scheme, host, path]) => `${scheme}://${host}/${path.join('/')}`);

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const excluded = isObject(schema.not) && Array.isArray(schema.not.enum) ? (schema.not.enum as string[]) : [];
  if (excluded.length > 0) return stringArbitrary({ ...schema, not: {} }).filter((s) => !excluded.includes(s));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as string[]));
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 24, 24);
  if (schema.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (schema.format === 'uri') return webUrl;
  if (schema.format === 'email') return fc.emailAddress();
  if (typeof schema.pattern === 'string') {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter(
        (s) =>
          s.length >= minLength &&
          s.length <= Math.max(maxLength, minLength, 1) * 4 &&
          s.length <= (typeof schema.maxLength === 'number' ? schema.maxLength : Infinity),
      );
  }
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

/** Values that satisfy `schema`. */
export function arbitraryFor(doc: JsonObject, raw: Schema): fc.Arbitrary<Json> {
  const schema = resolve(doc, raw);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Schema[]).map((s) => arbitraryFor(doc, s)));
  }
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryFor(doc, { ...schema, type })));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1_000_000,
        max: typeof schema.maximum === 'number' ? schema.maximum : 1_000_000,
      });
    case 'string':
      return stringArbitrary(schema);
    case 'array':
      return fc.array(arbitraryFor(doc, schema.items as Schema), {
        minLength: typeof schema.minItems === 'number' ? schema.minItems : 0,
        maxLength: 3,
      });
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const record = fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, arbitraryFor(doc, sub as Schema)])),
        { requiredKeys: required },
      );
      if (isObject(schema.additionalProperties)) {
        // A string map such as a hook's config: declared keys plus a few free ones.
        return fc
          .tuple(
            record,
            fc.dictionary(
              fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(k in properties)),
              arbitraryFor(doc, schema.additionalProperties),
              { maxKeys: 2 },
            ),
          )
          .map(([a, b]) => ({ ...b, ...a }) as Json);
      }
      return record as fc.Arbitrary<Json>;
    }
    default:
      return fc.jsonValue() as fc.Arbitrary<Json>;
  }
}

export interface Mutation {
  what: string;
  apply(value: JsonObject): JsonObject;
}

/** A value of the wrong JSON type for the schema. */
function wrongType(doc: JsonObject, raw: Schema): Json {
  const types = typesOf(resolve(doc, raw));
  if (!types.includes('integer') && !types.includes('number')) return 12345;
  return 'not-a-number';
}

/** Whether the server refuses no value of a field (`x-lenient`, on the field or the schema it names). */
export function isLenient(doc: JsonObject, raw: Schema): boolean {
  return raw['x-lenient'] === true || resolve(doc, raw)['x-lenient'] === true;
}

/**
 * One-constraint breaks of an object schema: a field of the wrong type or outside its enum or
 * range, an unknown field, a missing required field. A lenient field takes any value of its type.
 */
export function mutationsFor(doc: JsonObject, raw: Schema): Mutation[] {
  const schema = resolve(doc, raw);
  const properties = isObject(schema.properties) ? schema.properties : {};
  const mutations: Mutation[] = [];
  for (const [name, sub] of Object.entries(properties)) {
    const field = resolve(doc, sub as Schema);
    mutations.push({ what: `${name} of the wrong type`, apply: (v) => ({ ...v, [name]: wrongType(doc, field) }) });
    if (isLenient(doc, sub as Schema)) continue;
    if (Array.isArray(field.enum))
      mutations.push({ what: `${name} outside its enum`, apply: (v) => ({ ...v, [name]: 'not-one-of-them' }) });
    if (typeof field.maximum === 'number')
      mutations.push({
        what: `${name} above its maximum`,
        apply: (v) => ({ ...v, [name]: (field.maximum as number) + 1 }),
      });
    if (typeof field.minimum === 'number')
      mutations.push({
        what: `${name} below its minimum`,
        apply: (v) => ({ ...v, [name]: (field.minimum as number) - 1 }),
      });
  }
  for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
    mutations.push({
      what: `${name} missing`,
      apply: (v) => {
        const { [name]: _dropped, ...rest } = v;
        return rest;
      },
    });
  }
  if (schema.additionalProperties === false)
    mutations.push({ what: 'an unknown field', apply: (v) => ({ ...v, not_in_the_document: true }) });
  return mutations;
}
