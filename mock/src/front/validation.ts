// The front's request check: Prism's validators (standalone in its package, so they load fast and
// bundle for a browser) over the lenient view of the operation, a form as URL-encoded fields, and
// the words for what they find; the front answers them 422, the proxy reports them.
import type { IHttpRequest } from '@stoplight/prism-http';
import { validateInput } from '@stoplight/prism-http/dist/validator/index.js';
import validators from '@stoplight/prism-http/dist/validator/validators/index.js';
import type { IHttpOperation } from '@stoplight/types';
import uriTemplate from 'uri-template-lite';
import { latin1Bytes } from '../common/bytes.js';
import { clip } from '../contract/clip.js';
import { jsonShape, MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { formContent } from './body.js';
import { JSON_TYPE } from './errors.js';
import { lenientView } from './lenient.js';
import { parseMediaType } from './media-type.js';
import { formForPrism, parseForm, type FormPart } from './multipart.js';
import type { MockOperation } from './operations.js';

export type Diagnostic = { path?: string[]; message: string; code?: string | number; severity: number };

/** The errors among Prism's diagnostics (a Left of its validators); warnings do not count. */
function errorsOf(result: { _tag: 'Left'; left: readonly Diagnostic[] } | { _tag: 'Right' }): Diagnostic[] {
  return result._tag === 'Left' ? result.left.filter((diagnostic) => diagnostic.severity === 0) : [];
}

const FORM_TYPE = 'application/x-www-form-urlencoded';
const asForm = new WeakMap<IHttpOperation, IHttpOperation>();

/** The operation with its multipart body read as URL-encoded fields, which Prism parses without throwing. */
function formOperation(operation: IHttpOperation): IHttpOperation | undefined {
  const multipart = formContent(operation);
  if (!multipart || !operation.request?.body) return undefined;
  let relabelled = asForm.get(operation);
  if (!relabelled) {
    relabelled = {
      ...operation,
      request: {
        ...operation.request,
        body: { ...operation.request.body, contents: [{ ...multipart, mediaType: FORM_TYPE }] },
      },
    };
    asForm.set(operation, relabelled);
  }
  return relabelled;
}

/**
 * What Prism's validator reads of a request, so that it cannot throw: a Content-Type that is no
 * media type is left out (a request with a body was refused for it already), and a multipart
 * form (`form`, read by readBody or parseForm) is given as URL-encoded fields.
 */
function validationView(
  operation: IHttpOperation,
  element: IHttpRequest,
  form: readonly FormPart[] | undefined,
): { resource: IHttpOperation; element: IHttpRequest } {
  const lenient = lenientView(operation);
  const headers = { ...element.headers };
  if (headers['content-type'] !== undefined && !parseMediaType(headers['content-type'])) delete headers['content-type'];
  const relabelled = form ? formOperation(lenient) : undefined;
  if (!relabelled) return { resource: lenient, element: { ...element, headers } };
  return {
    resource: relabelled,
    element: { ...element, headers: { ...headers, 'content-type': FORM_TYPE }, body: formForPrism(form!) },
  };
}

/** Prism's ValidationContext.Input: diagnostics worded `Request …`. */
const INPUT = 0;

type ParamSpec = { name: string; required?: boolean; schema?: { type?: unknown } };
type ParamCheck = typeof validators.validateHeaders;

/** A group of parameters (headers, query, path) and whether a request that gives none of them passes without a look. */
interface ParamGroup {
  specs: ParamSpec[];
  /** Lower-cased, as Prism reads them. */
  names: Set<string>;
  /**
   * No parameter is required, and none is a list or an object, whose readers look at other names
   * or fail on a missing value: with none of the names given, Prism checks an empty object
   * against no required property, and finds nothing.
   */
  passesAbsent: boolean;
}

/**
 * What Prism's validateInput does for a request, taken apart once per operation: the body alone
 * through validateInput, then the headers, the query and the path through Prism's own validators,
 * in validateInput's order. validateInput compiles a matcher of the path template for every
 * request (its getPathParams), a quarter of its time: here it is compiled once a template, from
 * the same library. A group of which a request gives no parameter and none is required is not
 * looked at, as it cannot find anything.
 */
interface RequestCheck {
  bodyOnly: IHttpOperation;
  bundle: unknown;
  headers: ParamGroup | undefined;
  query: ParamGroup | undefined;
  path: { specs: ParamSpec[]; template: { match(path: string): Record<string, unknown> | null } } | undefined;
}
const requestChecks = new WeakMap<IHttpOperation, RequestCheck>();
const templates = new Map<string, { match(path: string): Record<string, unknown> | null }>();

function groupOf(specs: readonly ParamSpec[] | undefined): ParamGroup | undefined {
  if (!specs) return undefined;
  return {
    specs: [...specs],
    names: new Set(specs.map((spec) => spec.name.toLowerCase())),
    passesAbsent: specs.every(
      (spec) => !spec.required && spec.schema?.type !== 'array' && spec.schema?.type !== 'object',
    ),
  };
}

function requestCheckOf(resource: IHttpOperation): RequestCheck {
  let check = requestChecks.get(resource);
  if (!check) {
    const { request } = resource;
    let path: RequestCheck['path'];
    if (request?.path) {
      let template = templates.get(resource.path);
      if (!template) templates.set(resource.path, (template = new uriTemplate.URI.Template(resource.path)));
      path = { specs: request.path as ParamSpec[], template };
    }
    check = {
      bodyOnly: request ? { ...resource, request: request.body ? { body: request.body } : {} } : resource,
      bundle: (resource as { __bundled__?: unknown }).__bundled__,
      headers: groupOf(request?.headers as ParamSpec[] | undefined),
      query: groupOf(request?.query as ParamSpec[] | undefined),
      path,
    };
    requestChecks.set(resource, check);
  }
  return check;
}

/** The errors Prism's `validate` finds in `target` for a group, or none when it gives none of the group's names and may. */
function paramErrors(
  group: ParamGroup | undefined,
  target: Record<string, unknown>,
  validate: ParamCheck,
  bundle: unknown,
): Diagnostic[] {
  if (!group) return [];
  if (group.passesAbsent && !Object.keys(target).some((name) => group.names.has(name.toLowerCase()))) return [];
  return errorsOf(validate(target as Record<string, string>, group.specs as never, INPUT, bundle));
}

/** How a request breaks the document: `element` as the front reads it, with `form` for a multipart body. */
export function requestErrors(
  operation: IHttpOperation,
  element: IHttpRequest,
  form: readonly FormPart[] | undefined,
): Diagnostic[] {
  const view = validationView(operation, element, form);
  const check = requestCheckOf(view.resource);
  const checked = view.element;
  return [
    ...errorsOf(validateInput({ resource: check.bodyOnly, element: checked })),
    ...paramErrors(check.headers, checked.headers ?? {}, validators.validateHeaders, check.bundle),
    ...paramErrors(check.query, checked.url.query ?? {}, validators.validateQuery as ParamCheck, check.bundle),
    ...(check.path
      ? errorsOf(
          validators.validatePath(
            (check.path.template.match(checked.url.path) ?? {}) as Record<string, string>,
            check.path.specs as never,
            INPUT,
            check.bundle,
          ),
        )
      : []),
  ];
}

/**
 * The ways a request breaks the document, each as `location: message`, for the proxy's report:
 * `element` holds the body as the proxy read it (JSON, or text as Latin-1 bytes); with `bodyRead`
 * false it was too large to read whole, and the body is left out of the check.
 */
export function requestViolations(op: MockOperation, element: IHttpRequest, bodyRead: boolean): string[] {
  // Prism's path matcher would throw on it; Gitea answers it 400, which the proxy passes on.
  if (decodedSegments(element.url.path) === undefined) return ['path: the request path is not a valid URL path'];
  const { body } = element;
  const headers = { ...element.headers };
  const problems: string[] = [];
  // What readBody refuses, the proxy reports; such a body is then left out, as one too large.
  // So is a body of more values than the mock validates (body.ts says why).
  let withBody = bodyRead && jsonShape(body, MAX_CHECKED_VALUES, Number.POSITIVE_INFINITY).values <= MAX_CHECKED_VALUES;
  let form: FormPart[] | undefined;
  const type = headers['content-type'];
  const mime = type === undefined ? undefined : parseMediaType(type);
  if (type !== undefined && !mime && body !== undefined) {
    problems.push(`headers.content-type: not a media type: ${JSON.stringify(type.slice(0, 100))}`);
    withBody = false;
  }
  const boundary =
    mime?.essence === 'multipart/form-data' && formContent(op.operation) ? mime.params.get('boundary') : null;
  if (withBody && boundary && typeof body === 'string') {
    const parsed = parseForm(latin1Bytes(body), boundary);
    if (parsed.ok) form = parsed.parts;
    else {
      problems.push(`body: failed to parse request multipart form: ${parsed.message}`);
      withBody = false;
    }
  }
  // Without its body: no body in the operation, and no length that says there is one.
  const { body: _omitted, ...request } = op.operation.request ?? {};
  const resource = withBody ? op.operation : { ...op.operation, request };
  if (!withBody) delete headers['content-length'];
  const checked: IHttpRequest = withBody
    ? { ...element, headers }
    : { method: element.method, url: element.url, headers };
  return [
    ...problems,
    ...requestErrors(resource, checked, form).map(
      (d) =>
        `${String(d.code) === '415' ? 'headers.content-type' : (d.path ?? []).join('.') || 'request'}: ${namingNull(d.message)}`,
    ),
  ];
}

/** Prism lists an enum's values joined by commas and writes `null` as nothing: name it. */
function namingNull(message: string): string {
  return message.replace(/(allowed values: [^;]*?), ?(?=$|;)/, '$1, null');
}

/** Violations a message names, at most; it counts the rest. */
export const LISTED_VIOLATIONS = 20;
/** Longest violation named, in characters: a property name may be megabytes long. */
const VIOLATION_CHARS = 500;

/** `items` joined by `; `, at most LISTED_VIOLATIONS of them, then how many of `total` were left out. */
export function listViolations(items: readonly string[], total = items.length): string {
  const listed = items.slice(0, LISTED_VIOLATIONS).map((item) => clip(item, VIOLATION_CHARS));
  const more = total - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}

/** Prism's diagnostics in one readable line, such as `body.permission: must be equal to one of …`, with at most LISTED_VIOLATIONS named. */
export function describeViolations(
  violations: readonly { path?: string[]; message: string; code?: string | number }[],
): string {
  const named = violations.slice(0, LISTED_VIOLATIONS).map((v) => {
    // Gitea's binding words a content type it cannot read this way.
    if (String(v.code) === '415') return `[]: Unsupported Content-Type (${v.message})`;
    return v.path && v.path.length > 0 ? `${v.path.join('.')}: ${namingNull(v.message)}` : namingNull(v.message);
  });
  return listViolations(named, violations.length);
}

/**
 * The path's segments percent-decoded, or undefined when one holds a broken escape or bad UTF-8,
 * which Prism's router and the sandbox would throw on. The result is used: a bundler takes a call
 * of decodeURIComponent whose result is dropped for pure, and removes it.
 */
export function decodedSegments(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

/** Content type as Gitea labels it: JSON without a space before the charset, text with one. */
export function contentTypeFor(prismType: string | undefined): string | undefined {
  if (prismType === undefined) return undefined;
  const mediaType = (prismType.split(';')[0] ?? '').trim();
  if (mediaType.endsWith('json')) return JSON_TYPE;
  return mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType;
}

export type PrismMethod = IHttpRequest['method'];
