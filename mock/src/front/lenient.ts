// Values the real server refuses nowhere. A schema marked `x-lenient: true` lists what to send,
// but Gitea takes any value there: it reads an id that is not a number as 0 and finds nothing,
// a paging value it cannot use as the default, an unknown hook event or notification status as
// none or `read`. The request check (the front's and the proxy's) therefore reads an operation
// through `lenientView`, and the answer sources read the value as Gitea does.
import type { IHttpOperation, IHttpParam } from '@stoplight/types';
import { pathParams } from './operations.js';

type Schema = Record<string, unknown>;

/** What a schema asserts of a value beyond its JSON type. */
const ASSERTIONS = [
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'format',
  'minLength',
  'maxLength',
];

const isLenient = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && (schema as Schema)['x-lenient'] === true;

/**
 * A body schema with every lenient node stripped of its assertions: such a field still needs its
 * JSON type, as Go's decoder does, and takes any value of it. Unchanged nodes are shared.
 */
function relaxBody(node: unknown, done: Map<object, unknown>): unknown {
  if (typeof node !== 'object' || node === null) return node;
  if (done.has(node)) return done.get(node);
  // A cycle meets itself here, and keeps its original: request bodies have none.
  done.set(node, node);
  let changed = false;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(node) ? [] : {};
  for (const [key, value] of Object.entries(node)) {
    const relaxed = relaxBody(value, done);
    changed ||= relaxed !== value;
    (copy as Record<string, unknown>)[key] = relaxed;
  }
  if (isLenient(node)) {
    for (const keyword of ASSERTIONS) delete (copy as Schema)[keyword];
    changed = true;
  }
  const result = changed ? copy : node;
  done.set(node, result);
  return result;
}

/** A parameter comes as text, so a lenient one takes any text. */
const relaxParam = <P extends IHttpParam>(param: P): P => (isLenient(param.schema) ? { ...param, schema: {} } : param);

const views = new WeakMap<IHttpOperation, IHttpOperation>();

/** The operation as the request check reads it: its lenient parameters and fields refuse nothing. */
export function lenientView(operation: IHttpOperation): IHttpOperation {
  const known = views.get(operation);
  if (known) return known;
  const request = operation.request;
  if (!request) return operation;
  const done = new Map<object, unknown>();
  const view: IHttpOperation = {
    ...operation,
    request: {
      ...request,
      ...(request.path ? { path: request.path.map(relaxParam) } : {}),
      ...(request.query ? { query: request.query.map(relaxParam) } : {}),
      ...(request.headers ? { headers: request.headers.map(relaxParam) } : {}),
      ...(request.body
        ? {
            body: {
              ...request.body,
              contents: (request.body.contents ?? []).map((content) => ({
                ...content,
                ...(content.schema ? { schema: relaxBody(content.schema, done) as typeof content.schema } : {}),
              })),
            },
          }
        : {}),
    },
  };
  views.set(operation, view);
  return view;
}

/** What Go's `strconv.ParseInt(s, 10, 64)` reads: a sign and decimal digits, nothing around them. */
const DECIMAL = /^[+-]?[0-9]+$/;

/**
 * A number as Gitea reads an id in the path or a paging value (`strconv.ParseInt(s, 10, 64)` or
 * `strconv.Atoi`, the error dropped): a sign and decimal digits, else 0 (no id, or the default).
 */
export function goDecimal(text: string | null | undefined): number {
  return typeof text === 'string' && DECIMAL.test(text) ? Number(text) : 0;
}

/**
 * Whether a lenient integer of the path is no number to Gitea (`keys/eleven`), so that the request
 * names nothing on any server and answers what an unknown id answers.
 */
export function namesNothing(operation: IHttpOperation, path: string): boolean {
  const values = pathParams(operation.path, path);
  return (operation.request?.path ?? []).some((param) => {
    const schema = param.schema as Schema | undefined;
    return isLenient(schema) && schema?.type === 'integer' && !DECIMAL.test(values[param.name] ?? '');
  });
}
