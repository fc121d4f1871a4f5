// The check of every example in an OpenAPI document against the schema it illustrates, and of
// every request and response media type for at least one named example: the base document's
// suite (test/examples.test.ts) and the profiles' (test/profiles.test.ts) run it.
import type { ValidateFunction } from 'ajv';
import {
  createSchemaValidator,
  deref,
  escapePointerSegment,
  isObject,
  type Json,
  type JsonObject,
  type Operation,
  pointer,
} from './mock-internals.js';

class Problems {
  readonly list: string[] = [];
  add(location: string, message: string): void {
    const text = `#${location}: ${message}`;
    if (!this.list.includes(text)) this.list.push(text); // a broken schema is reported once
  }
}

export interface ExampleChecks {
  /** Why the document's schemas could not be compiled at all, if so. */
  error: string | undefined;
  /** What is written inline in an operation or webhook; $ref'd components are checked by `components`. */
  operation(op: Operation, webhook?: boolean): string[];
  /** The shared components. */
  components(): string[];
}

export function exampleChecks(doc: JsonObject): ExampleChecks {
  const schemas = createSchemaValidator(doc);
  const validatorAt = (location: string): ValidateFunction | string => schemas.at(location);

  function validateValue(p: Problems, value: Json, schemaLocation: string, exampleLocation: string): void {
    const v = validatorAt(schemaLocation);
    if (typeof v === 'string') {
      p.add(schemaLocation, `schema does not compile: ${v}`);
      return;
    }
    if (v(value)) return;
    const errors = (v.errors ?? [])
      .slice(0, 6)
      .map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    p.add(exampleLocation, `does not match #${schemaLocation}: ${errors.join('; ')}`);
  }

  /** Schema-level `example` / `examples` (an array here) anywhere inside an inline schema. */
  const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const;
  const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
  const SUBSCHEMAS = [
    'items',
    'additionalProperties',
    'not',
    'if',
    'then',
    'else',
    'contains',
    'propertyNames',
    'unevaluatedItems',
    'unevaluatedProperties',
  ] as const;

  function checkSchemaExamples(p: Problems, schema: Json | undefined, location: string): void {
    if (!isObject(schema)) return;
    if (Object.hasOwn(schema, 'example')) validateValue(p, schema.example as Json, location, `${location}/example`);
    if (Object.hasOwn(schema, 'examples')) {
      const examples = schema.examples;
      if (Array.isArray(examples))
        for (const [i, e] of examples.entries()) validateValue(p, e, location, `${location}/examples/${i}`);
      else
        p.add(`${location}/examples`, "a schema's examples must be an array (named examples belong on the media type)");
    }
    for (const key of SUBSCHEMA_MAPS) {
      const map = schema[key];
      if (isObject(map))
        for (const [name, sub] of Object.entries(map))
          checkSchemaExamples(p, sub, `${location}/${key}/${escapePointerSegment(name)}`);
    }
    for (const key of SUBSCHEMA_LISTS) {
      const list = schema[key];
      if (Array.isArray(list))
        for (const [i, sub] of list.entries()) checkSchemaExamples(p, sub, `${location}/${key}/${i}`);
    }
    for (const key of SUBSCHEMAS) checkSchemaExamples(p, schema[key], `${location}/${key}`);
  }

  /** `examples` map of a media type, parameter or header: each entry inline or a $ref to components/examples. */
  function checkNamedExamples(
    p: Problems,
    examples: Json | undefined,
    schemaLocation: string | undefined,
    location: string,
  ): number {
    if (examples === undefined) return 0;
    if (!isObject(examples)) {
      p.add(location, 'examples must be a map of named examples');
      return 0;
    }
    let count = 0;
    for (const [name, entry] of Object.entries(examples)) {
      const at = `${location}/${escapePointerSegment(name)}`;
      const r = deref(doc, entry, at);
      const where = r.refs.length > 0 ? `${at} (→ #${r.location})` : at;
      if (!isObject(r.value)) {
        p.add(where, 'example does not resolve to an Example object');
        continue;
      }
      count += 1;
      if (!Object.hasOwn(r.value, 'value')) {
        p.add(where, 'example has no inline value to validate');
        continue;
      }
      if (schemaLocation === undefined) p.add(where, 'no schema to validate the example against');
      else validateValue(p, r.value.value as Json, schemaLocation, where);
    }
    return count;
  }

  /** A media type of a request body or response; `named` demands at least one named example. */
  function checkMediaType(p: Problems, media: Json | undefined, location: string, named: boolean): void {
    if (!isObject(media)) {
      p.add(location, 'media type is not an object');
      return;
    }
    const schemaLocation = isObject(media.schema) ? `${location}/schema` : undefined;
    if (schemaLocation) checkSchemaExamples(p, media.schema, schemaLocation);
    const count = checkNamedExamples(p, media.examples, schemaLocation, `${location}/examples`);
    if (Object.hasOwn(media, 'example')) {
      if (schemaLocation === undefined) p.add(`${location}/example`, 'no schema to validate the example against');
      else validateValue(p, media.example as Json, schemaLocation, `${location}/example`);
    }
    if (named && count === 0) p.add(location, 'has no named example (examples)');
  }

  function checkContent(
    p: Problems,
    content: Json | undefined,
    location: string,
    named: boolean | ((type: string) => boolean),
  ): void {
    if (!isObject(content)) return;
    for (const [type, media] of Object.entries(content))
      checkMediaType(
        p,
        media,
        `${location}/content/${escapePointerSegment(type)}`,
        typeof named === 'function' ? named(type) : named,
      );
  }

  /**
   * A webhook's form variant carries its JSON payload as the text of a field (`contentSchema`),
   * which no schema check reads: each example's text must be JSON valid against that schema.
   */
  function checkFormPayloads(p: Problems, content: Json | undefined, location: string): void {
    const form = isObject(content) ? content['application/x-www-form-urlencoded'] : undefined;
    if (!isObject(form) || !isObject(form.examples)) return;
    const at = `${location}/content/application~1x-www-form-urlencoded`;
    const schemaAt = `${at}/schema/properties/payload/contentSchema`;
    for (const [name, entry] of Object.entries(form.examples)) {
      const r = deref(doc, entry, `${at}/examples/${name}`);
      const text = isObject(r.value) && isObject(r.value.value) ? r.value.value.payload : undefined;
      let payload: Json;
      try {
        payload = JSON.parse(String(text)) as Json;
      } catch {
        p.add(r.location, 'the form field payload is not JSON');
        continue;
      }
      validateValue(p, payload, schemaAt, `${r.location}/value/payload`);
    }
  }

  /** Parameters and headers: `schema` with `example`/`examples`, or `content`. */
  function checkParameterLike(p: Problems, obj: JsonObject, location: string): void {
    const schemaLocation = isObject(obj.schema) ? `${location}/schema` : undefined;
    if (schemaLocation) {
      // Compiled even without examples: a broken header or parameter schema is worth knowing about.
      const v = validatorAt(schemaLocation);
      if (typeof v === 'string') p.add(schemaLocation, `schema does not compile: ${v}`);
      checkSchemaExamples(p, obj.schema, schemaLocation);
    }
    checkNamedExamples(p, obj.examples, schemaLocation, `${location}/examples`);
    if (Object.hasOwn(obj, 'example')) {
      if (schemaLocation === undefined) p.add(`${location}/example`, 'no schema to validate the example against');
      else validateValue(p, obj.example as Json, schemaLocation, `${location}/example`);
    }
    checkContent(p, obj.content, location, false);
  }

  function checkResponse(p: Problems, response: JsonObject, location: string): void {
    if (isObject(response.headers)) {
      for (const [name, header] of Object.entries(response.headers)) {
        // Shared headers are checked once, with the components.
        if (isObject(header) && typeof header.$ref !== 'string')
          checkParameterLike(p, header, `${location}/headers/${escapePointerSegment(name)}`);
      }
    }
    checkContent(p, response.content, location, true);
  }

  /**
   * Only what is written inline in the operation; $ref'd components are checked once, in their own
   * test. A webhook's JSON body needs a named example, its form variant (the same JSON as a field) may go without.
   */
  function checkOperation(op: Operation, webhook = false): string[] {
    const p = new Problems();
    const inlineParams: [Json | undefined, string][] = [];
    const collect = (list: Json | undefined, base: string): void => {
      if (Array.isArray(list))
        for (const [i, param] of list.entries()) inlineParams.push([param, `${base}/parameters/${i}`]);
    };
    collect(op.pathItem.parameters, op.location.slice(0, op.location.lastIndexOf('/')));
    collect(op.operation.parameters, op.location);
    for (const [param, location] of inlineParams) {
      if (isObject(param) && typeof param.$ref !== 'string') checkParameterLike(p, param, location);
    }

    const body = op.operation.requestBody;
    if (isObject(body) && typeof body.$ref !== 'string') {
      checkContent(p, body.content, `${op.location}/requestBody`, webhook ? (type) => type.endsWith('json') : true);
      checkFormPayloads(p, body.content, `${op.location}/requestBody`);
    }

    if (isObject(op.operation.responses)) {
      for (const [status, response] of Object.entries(op.operation.responses)) {
        if (isObject(response) && typeof response.$ref !== 'string')
          checkResponse(p, response, `${op.location}/responses/${status}`);
      }
    }
    return p.list;
  }

  function checkComponents(): string[] {
    const p = new Problems();
    const components = isObject(doc.components) ? doc.components : {};
    const each = (kind: string, fn: (value: JsonObject, location: string) => void): void => {
      const map = components[kind];
      if (!isObject(map)) return;
      for (const [name, value] of Object.entries(map)) {
        const location = pointer(['components', kind, name]);
        // A component that is itself a $ref is checked where it points.
        if (isObject(value) && typeof value.$ref !== 'string') fn(value, location);
      }
    };
    each('parameters', (v, l) => checkParameterLike(p, v, l));
    each('headers', (v, l) => checkParameterLike(p, v, l));
    each('requestBodies', (v, l) => checkContent(p, v.content, l, true));
    each('responses', (v, l) => checkResponse(p, v, l));
    each('schemas', (v, l) => checkSchemaExamples(p, v, l));
    return p.list;
  }

  return { error: schemas.error, operation: checkOperation, components: checkComponents };
}
