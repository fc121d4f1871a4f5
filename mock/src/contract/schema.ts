// Ajv (JSON Schema 2020-12) over the whole document, so any schema in it can validate a value by
// its JSON pointer. Shared by the example checks, the contract suites and live mode.
// Both packages are CommonJS; under NodeNext a default import yields module.exports typed as the
// module namespace, so take Ajv2020 by name and the plugin from `.default` (set by both at run time).
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { Json, JsonObject } from './document.js';

const DOC_ID = 'openapi';

/** Gitea's `emailRegexp` (models/user), character for character: `+-/` is a range, as in Go. */
const GITEA_EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+-/=?^_`{|}~]*@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

function makeAjv(doc: JsonObject, allErrors = true): { ajv: InstanceType<typeof Ajv2020>; error?: string } {
  // Strict by default so a typo in a schema surfaces; strictTypes is off because the document
  // deliberately carries uniqueItems on strings (the seed's "unique items") and nullable unions.
  const ajv = new Ajv2020({ allErrors, strictTypes: false, allowUnionTypes: true });
  ajvFormats.default(ajv);
  // OpenAPI's format registry: ajv-formats does not know these, and strict mode rejects unknown formats.
  const inRange = (min: number, max: number) => (n: number) => Number.isInteger(n) && n >= min && n <= max;
  ajv.addFormat('int32', { type: 'number', validate: inRange(-(2 ** 31), 2 ** 31 - 1) });
  ajv.addFormat('int64', { type: 'number', validate: inRange(-(2 ** 63), 2 ** 63 - 1) });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  ajv.addFormat('binary', { type: 'string', validate: () => true }); // file parts: any string stands in
  ajv.addFormat('byte', { type: 'string', validate: /^[A-Za-z0-9+/]*={0,2}$/ });
  ajv.addFormat('password', { type: 'string', validate: () => true });
  // An e-mail address as Gitea accepts one (its `emailRegexp`: a domain needs no dot, so
  // `admin@localhost` is one), or none at all: Gitea checks addresses only when they are set, and
  // sends `""` for an organization shown as a user. Ajv's own format would flag real answers.
  ajv.addFormat('email', { type: 'string', validate: (value: string) => value === '' || GITEA_EMAIL.test(value) });
  // OpenAPI's own schema keywords are annotations for validation purposes; register them rather
  // than turning strict mode off, so unknown keywords (typos such as `minimun`) still fail.
  const extensions = new Set<string>(['example', 'discriminator', 'xml', 'externalDocs']);
  collectExtensionKeys(doc, extensions);
  // Ajv compiles the document root when it resolves a ref into it, so the root's OpenAPI fields
  // (openapi, info, paths, components, ...) must be accepted as keywords too.
  for (const key of Object.keys(doc)) if (!ajv.getKeyword(key)) extensions.add(key);
  for (const keyword of extensions) ajv.addKeyword({ keyword });
  try {
    // Under a key, so `#/components/schemas/X` inside any schema resolves against the document.
    ajv.addSchema(doc, DOC_ID);
  } catch (error) {
    return { ajv, error: `the document cannot be added to Ajv: ${String(error)}` };
  }
  return { ajv };
}

/** `x-...` specification extensions may appear inside schemas; Ajv must accept them as keywords. */
function collectExtensionKeys(node: Json | undefined, into: Set<string>, seen = new Set<object>()): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node); // YAML aliases make shared nodes
  if (Array.isArray(node)) {
    for (const item of node) collectExtensionKeys(item, into, seen);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-')) into.add(key);
    collectExtensionKeys(value, into, seen);
  }
}

/** The validator of the schema at a JSON pointer, or the compile error as text. */
function validatorAt(
  ajv: InstanceType<typeof Ajv2020>,
  validators: Map<string, ValidateFunction | string>,
  location: string,
): ValidateFunction | string {
  const cached = validators.get(location);
  if (cached !== undefined) return cached;
  // Pointer segments such as `{owner}` must be URI-safe inside the $ref.
  const fragment = location
    .split('/')
    .slice(1)
    .map((s) => `/${encodeURIComponent(s)}`)
    .join('');
  let v: ValidateFunction | string;
  try {
    v = ajv.compile({ $ref: `${DOC_ID}#${fragment}` });
  } catch (error) {
    v = error instanceof Error ? error.message : String(error);
  }
  validators.set(location, v);
  return v;
}

export interface SchemaValidator {
  /** Set when the document itself cannot be loaded into Ajv. */
  error?: string;
  /** The validator for the schema at `pointer` (such as `/components/schemas/User`), or its compile error. */
  at(pointer: string): ValidateFunction | string;
  /**
   * The same, stopping at the first problem: its errors are a handful however large the value,
   * where `at`'s are as many as the value's parts that break the schema.
   */
  firstProblemAt(pointer: string): ValidateFunction | string;
  /** Problems of `value` against the schema at `pointer`; empty when it conforms. */
  check(pointer: string, value: unknown): string[];
}

export function createSchemaValidator(doc: JsonObject): SchemaValidator {
  const { ajv, error } = makeAjv(doc);
  const validators = new Map<string, ValidateFunction | string>();
  const at = (pointer: string): ValidateFunction | string => validatorAt(ajv, validators, pointer);
  let firstProblem: { ajv: InstanceType<typeof Ajv2020>; validators: Map<string, ValidateFunction | string> };
  return {
    ...(error === undefined ? {} : { error }),
    at,
    firstProblemAt(pointer) {
      // Made on first use: only an answer too large to list every problem of needs it.
      firstProblem ??= { ajv: makeAjv(doc, false).ajv, validators: new Map() };
      return validatorAt(firstProblem.ajv, firstProblem.validators, pointer);
    },
    check(pointer, value) {
      const v = at(pointer);
      if (typeof v === 'string') return [`schema ${pointer} does not compile: ${v}`];
      if (v(value)) return [];
      return (v.errors ?? []).slice(0, 6).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
    },
  };
}
