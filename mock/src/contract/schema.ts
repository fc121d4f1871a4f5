// Ajv (JSON Schema 2020-12) over the whole document, so any schema in it validates a value by its JSON pointer.
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { Json, JsonObject } from './document.js';

const DOC_ID = 'openapi';

/** Gitea's `emailRegexp` (models/user), character for character: `+-/` is a range, as in Go. */
const GITEA_EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+-/=?^_`{|}~]*@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** `x-...` specification extensions, which may appear inside schemas. */
function collectExtensionKeys(node: Json | undefined, into: Set<string>, seen = new Set<object>()): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node); // YAML aliases make shared nodes
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-')) into.add(key);
    collectExtensionKeys(value, into, seen);
  }
}

/** The document in an Ajv, and the validator of the schema at a JSON pointer, compiled on first use, or its compile error. */
function compiler(doc: JsonObject, allErrors: boolean, removeAdditional = false) {
  // Strict, so a typo in a schema surfaces; strictTypes off for the document's uniqueItems on strings and nullable unions.
  // Verbose, so that an error holds the value it is about (a body's enum error quotes it).
  const ajv = new Ajv2020({ allErrors, removeAdditional, strictTypes: false, allowUnionTypes: true, verbose: true });
  ajvFormats.default(ajv);
  // OpenAPI's format registry: ajv-formats does not know these, and strict mode rejects unknown formats.
  const inRange = (min: number, max: number) => (n: number) => Number.isInteger(n) && n >= min && n <= max;
  ajv.addFormat('int32', { type: 'number', validate: inRange(-(2 ** 31), 2 ** 31 - 1) });
  ajv.addFormat('int64', { type: 'number', validate: inRange(-(2 ** 63), 2 ** 63 - 1) });
  for (const format of ['float', 'double']) ajv.addFormat(format, { type: 'number', validate: () => true });
  // binary: file parts, any string stands in.
  for (const format of ['binary', 'password']) ajv.addFormat(format, { type: 'string', validate: () => true });
  ajv.addFormat('byte', { type: 'string', validate: /^[A-Za-z0-9+/]*={0,2}$/ });
  // As Gitea accepts one (a domain needs no dot: `admin@localhost`), or `""`, which Gitea sends for an organization shown as a user.
  ajv.addFormat('email', { type: 'string', validate: (value: string) => value === '' || GITEA_EMAIL.test(value) });
  // Annotations, extensions and the root's fields (compiled for a ref into it) as keywords: a typo still fails.
  const keywords = new Set<string>(['example', 'discriminator', 'xml', 'externalDocs']);
  collectExtensionKeys(doc, keywords);
  for (const key of Object.keys(doc)) if (!ajv.getKeyword(key)) keywords.add(key);
  for (const keyword of keywords) ajv.addKeyword({ keyword });
  let error: string | undefined;
  try {
    // Under a key, so `#/components/schemas/X` inside any schema resolves against the document.
    ajv.addSchema(doc, DOC_ID);
  } catch (problem) {
    error = `the document cannot be added to Ajv: ${String(problem)}`;
  }
  const validators = new Map<string, ValidateFunction | string>();
  const at = (location: string): ValidateFunction | string => {
    let validator = validators.get(location);
    if (validator !== undefined) return validator;
    // Pointer segments such as `{owner}` must be URI-safe inside the $ref.
    const fragment = location.split('/').slice(1).map(encodeURIComponent).join('/');
    try {
      validator = ajv.compile({ $ref: `${DOC_ID}#/${fragment}` });
    } catch (problem) {
      validator = problem instanceof Error ? problem.message : String(problem);
    }
    validators.set(location, validator);
    return validator;
  };
  return { error, at };
}

export type SchemaValidator = ReturnType<typeof createSchemaValidator>;

export function createSchemaValidator(doc: JsonObject) {
  const { error, at } = compiler(doc, true);
  let firstProblem: ReturnType<typeof compiler> | undefined;
  let fitting: ReturnType<typeof compiler> | undefined;
  return {
    ...(error === undefined ? {} : { error }),
    at,
    /** `at`, stopping at the first problem: a handful of errors however large the value; made on first use, as only an answer too large to list every problem of needs it. */
    firstProblemAt: (pointer: string) => (firstProblem ??= compiler(doc, false)).at(pointer),
    /** A copy of `value` without the fields its schema leaves out of a closed record (`additionalProperties: false`). */
    fitted<T>(pointer: string, value: T): T {
      const copy = structuredClone(value);
      const validate = (fitting ??= compiler(doc, true, true)).at(pointer);
      if (typeof validate !== 'string') validate(copy);
      return copy;
    },
    check(pointer: string, value: unknown): string[] {
      const v = at(pointer);
      if (typeof v === 'string') return [`schema ${pointer} does not compile: ${v}`];
      if (v(value)) return [];
      return (v.errors ?? []).slice(0, 6).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
    },
  };
}
