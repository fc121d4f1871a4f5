// The request check, with Prism's validators standalone in its package, so they load fast and bundle for a browser.
import type { IHttpRequest } from '@stoplight/prism-http';
import { validateInput } from '@stoplight/prism-http/dist/validator/index.js';
import validators from '@stoplight/prism-http/dist/validator/validators/index.js';
import type { IHttpOperation, IHttpParam, IMediaTypeContent } from '@stoplight/types';
import uriTemplate from 'uri-template-lite';
import { attempt } from '../common/attempt.js';
import { latin1Bytes } from '../common/bytes.js';
import { clip } from '../contract/exchange-report.js';
import { jsonShape, MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { formContent, formForPrism, parseMediaType, readForm, type FormPart } from './body.js';
import { pathParams, type MockOperation } from './operations.js';

type Diagnostic = { path?: string[]; message: string; code?: string | number; severity: number };
type Schema = Record<string, unknown>;

// `x-lenient: true` lists what to send, but Gitea takes any value there (an id that is no number as 0, and so on).
const ASSERTIONS =
  'enum const minimum maximum exclusiveMinimum exclusiveMaximum multipleOf pattern format minLength maxLength';
const isLenient = (schema: unknown): boolean => (schema as Schema | null | undefined)?.['x-lenient'] === true;

function relaxBody(node: unknown, done: Map<object, unknown>): unknown {
  if (typeof node !== 'object' || node === null) return node;
  if (done.has(node)) return done.get(node);
  // A cycle keeps its original: request bodies have none.
  done.set(node, node);
  let changed = isLenient(node);
  const copy: Record<string, unknown> | unknown[] = Array.isArray(node) ? [] : {};
  for (const [key, value] of Object.entries(node)) {
    const relaxed = relaxBody(value, done);
    changed ||= relaxed !== value;
    (copy as Record<string, unknown>)[key] = relaxed;
  }
  if (isLenient(node)) for (const keyword of ASSERTIONS.split(' ')) delete (copy as Schema)[keyword];
  done.set(node, changed ? copy : node);
  return changed ? copy : node;
}

function lenientView(operation: IHttpOperation): IHttpOperation {
  const { request } = operation;
  if (!request) return operation;
  const view: Record<string, unknown> = { ...request };
  for (const key of ['path', 'query', 'headers'] as const) {
    const params = request[key] as IHttpParam[] | undefined;
    if (params) view[key] = params.map((param) => (isLenient(param.schema) ? { ...param, schema: {} } : param));
  }
  const done = new Map<object, unknown>();
  const relax = (content: IMediaTypeContent) =>
    content.schema ? { ...content, schema: relaxBody(content.schema, done) as typeof content.schema } : content;
  if (request.body) view.body = { ...request.body, contents: (request.body.contents ?? []).map(relax) };
  return { ...operation, request: view };
}

// Go's `strconv.ParseInt(s, 10, 64)`
const DECIMAL = /^[+-]?[0-9]+$/;

/** As Gitea reads an id in the path or a paging value (ParseInt or Atoi, the error dropped). */
export function goDecimal(text: string | null | undefined): number {
  return typeof text === 'string' && DECIMAL.test(text) ? Number(text) : 0;
}

/** A lenient integer of the path that is no number to Gitea (`keys/eleven`) names nothing on any server. */
export function namesNothing(operation: IHttpOperation, path: string): boolean {
  const values = pathParams(operation.path, path);
  return (operation.request?.path ?? []).some((param) => {
    const schema = param.schema as Schema | undefined;
    return isLenient(schema) && schema?.type === 'integer' && !DECIMAL.test(values[param.name] ?? '');
  });
}

function errorsOf(result: { _tag: 'Left'; left: readonly Diagnostic[] } | { _tag: 'Right' }): Diagnostic[] {
  return result._tag === 'Left' ? result.left.filter((diagnostic) => diagnostic.severity === 0) : [];
}

const FORM_TYPE = 'application/x-www-form-urlencoded';
const INPUT = 0;

type ParamSpec = { name: string; required?: boolean; schema?: { type?: unknown } };
type ParamCheck = typeof validators.validateHeaders;
type Check = (element: IHttpRequest) => Diagnostic[];

function groupCheck(specs: unknown, of: (element: IHttpRequest) => object, validate: ParamCheck, bundle: unknown) {
  const group = (specs ?? []) as ParamSpec[];
  const names = new Set(group.map((spec) => spec.name.toLowerCase()));
  const optional = group.every((spec) => !spec.required && !['array', 'object'].includes(String(spec.schema?.type)));
  return (element: IHttpRequest): Diagnostic[] => {
    const target = of(element) as Record<string, string>;
    if (optional && !Object.keys(target).some((name) => names.has(name.toLowerCase()))) return [];
    return errorsOf(validate(target, group as never, INPUT, bundle));
  };
}

// `form`: the multipart body read as URL-encoded fields, which Prism parses without throwing.
const requestChecks = { plain: new WeakMap<IHttpOperation, Check>(), form: new WeakMap<IHttpOperation, Check>() };

/** Prism's validateInput taken apart once per operation: it compiles the path template per request, a quarter of its time. */
function requestCheckOf(operation: IHttpOperation, asForm: boolean): Check {
  const checks = requestChecks[asForm ? 'form' : 'plain'];
  const known = checks.get(operation);
  if (known) return known;
  let resource = lenientView(operation);
  if (asForm) {
    const body = { ...resource.request!.body!, contents: [{ ...formContent(resource)!, mediaType: FORM_TYPE }] };
    resource = { ...resource, request: { ...resource.request, body } };
  }
  const { request } = resource;
  const bodyOnly = request ? { ...resource, request: request.body ? { body: request.body } : {} } : resource;
  const bundle = (resource as { __bundled__?: unknown }).__bundled__;
  const parts: Check[] = [
    (element) => errorsOf(validateInput({ resource: bodyOnly, element })),
    groupCheck(request?.headers, (element) => element.headers ?? {}, validators.validateHeaders, bundle),
    groupCheck(request?.query, (element) => element.url.query ?? {}, validators.validateQuery as ParamCheck, bundle),
  ];
  if (request?.path) {
    const [template, specs] = [new uriTemplate.URI.Template(resource.path), request.path as never];
    const matched = (path: string) => (template.match(path) ?? {}) as Record<string, string>;
    parts.push((element) => errorsOf(validators.validatePath(matched(element.url.path), specs, INPUT, bundle)));
  }
  const check: Check = (element) => parts.flatMap((part) => part(element));
  checks.set(operation, check);
  return check;
}

function requestErrors(operation: IHttpOperation, element: IHttpRequest, form?: readonly FormPart[]): Diagnostic[] {
  const asForm = form !== undefined && formContent(operation) !== undefined;
  const headers = { ...element.headers };
  if (headers['content-type'] !== undefined && !parseMediaType(headers['content-type'])) delete headers['content-type'];
  const check = requestCheckOf(operation, asForm);
  if (!asForm) return check({ ...element, headers });
  return check({ ...element, headers: { ...headers, 'content-type': FORM_TYPE }, body: formForPrism(form!) });
}

export function requestViolations(op: MockOperation, element: IHttpRequest, bodyRead: boolean): string[] {
  // Prism's path matcher would throw on it; Gitea answers it 400, which the proxy passes on.
  if (decodedSegments(element.url.path) === undefined) return ['path: the request path is not a valid URL path'];
  const { body, ...bare } = element;
  const headers = { ...element.headers };
  const problems: string[] = [];
  // What readBody refuses, the proxy reports, and leaves the body out; so a body of more values than the mock validates.
  let withBody = bodyRead && jsonShape(body, MAX_CHECKED_VALUES, Number.POSITIVE_INFINITY).values <= MAX_CHECKED_VALUES;
  const type = headers['content-type'];
  const mime = type === undefined ? undefined : parseMediaType(type);
  if (type !== undefined && !mime && body !== undefined) {
    problems.push(`headers.content-type: not a media type: ${JSON.stringify(type.slice(0, 100))}`);
    withBody = false;
  }
  const form = withBody && typeof body === 'string' ? readForm(latin1Bytes(body), mime, op.operation) : undefined;
  if (typeof form === 'string') problems.push(`body: ${form}`);
  withBody &&= typeof form !== 'string';
  const { body: _omitted, ...request } = op.operation.request ?? {};
  const resource = withBody ? op.operation : { ...op.operation, request };
  if (!withBody) delete headers['content-length'];
  const checked: IHttpRequest = withBody ? { ...element, headers } : { ...bare, headers };
  const where = (d: Diagnostic) => (String(d.code) === '415' ? 'headers.content-type' : d.path?.join('.') || 'request');
  const errors = requestErrors(resource, checked, typeof form === 'object' ? form : undefined);
  return [...problems, ...errors.map((d) => `${where(d)}: ${namingNull(d.message)}`)];
}

/** Prism writes an enum's `null` as nothing. */
const namingNull = (message: string): string => message.replace(/(allowed values: [^;]*?), ?(?=$|;)/, '$1, null');

export const LISTED_VIOLATIONS = 20;
/** A property name may be megabytes long. */
const VIOLATION_CHARS = 500;

export function listViolations(items: readonly string[], total = items.length): string {
  const listed = items.slice(0, LISTED_VIOLATIONS).map((item) => clip(item, VIOLATION_CHARS));
  const more = total - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}

/** Returned, as a bundler drops an unused decode. */
export const decodedSegments = (pathname: string): string[] | undefined =>
  attempt(() => pathname.split('/').map((segment) => decodeURIComponent(segment)));

export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return query;
}

export type PrismMethod = IHttpRequest['method'];

// models/user/user.go reservedUsernames
const RESERVED_USERNAMES = new Set(
  `. .. .well-known api metrics v2 assets attachments avatar avatars repo-avatars captcha login org repo user explore
  issues pulls milestones notifications favicon.ico manifest.json robots.txt sitemap.xml ssh_info swagger.v1.json
  openapi3.v1.json ghost gitea-actions`.split(/\s+/),
);
// `reservedUserPatterns`
const RESERVED_USERNAME_ENDINGS = ['.keys', '.gpg', '.rss', '.atom', '.png'];

// models/user/user.go IsUsableUsername
export function usernameProblem(name: string): string | undefined {
  // IsValidUsername (modules/validation/helpers.go): Go's `\w` and `\d` are ASCII, as they are here.
  if (!/^[0-9A-Za-z][-.\w]*$/.test(name) || /[-._]{2,}|[-._]$/.test(name))
    return `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`;
  const lower = name.toLowerCase();
  if (RESERVED_USERNAMES.has(lower)) return `name is reserved [name: ${lower}]`;
  const ending = RESERVED_USERNAME_ENDINGS.find((candidate) => lower.endsWith(candidate));
  return ending === undefined ? undefined : `name pattern is not allowed [pattern: *${ending}]`;
}

// services/secrets/validation.go ValidateName
export function secretNameProblem(name: string): string | undefined {
  // Go's `(?i)` folds case as Unicode's simple folding does (`ſ` is an `s`), as the `u` flag does.
  const valid = /^[A-Z_][A-Z0-9_]*$/iu.test(name) && !/^(GIT(EA|HUB)_|CI$)/iu.test(name);
  return valid ? undefined : 'invalid variable or secret name';
}

const NAME_RULES = new Map([
  ['updateUserSecret', { where: 'path', name: 'secretname', status: 400, problem: secretNameProblem }],
  ['adminRenameUser', { where: 'body', name: 'new_username', status: 422, problem: usernameProblem }],
]);

function nameRefusal(op: MockOperation, request: IHttpRequest, violations: readonly Diagnostic[]) {
  const rule = NAME_RULES.get(op.operationId);
  if (!rule) return undefined;
  const { where, name } = rule;
  if (!violations.every((violation) => violation.path?.[0] === where && violation.path[1] === name)) return undefined;
  const value =
    where === 'path'
      ? pathParams(op.path, request.url.path)[name]
      : (request.body as Record<string, unknown> | undefined)?.[name];
  const message = typeof value === 'string' ? rule.problem(value) : undefined;
  return message === undefined ? undefined : { status: rule.status, message };
}

export function requestRefusal(op: MockOperation, request: IHttpRequest, form: readonly FormPart[] | undefined) {
  const errors = requestErrors(op.operation, request, form);
  if (errors.length === 0) return undefined;
  const named = errors.slice(0, LISTED_VIOLATIONS).map((v) => {
    if (String(v.code) === '415') return `[]: Unsupported Content-Type (${v.message})`;
    return v.path && v.path.length > 0 ? `${v.path.join('.')}: ${namingNull(v.message)}` : namingNull(v.message);
  });
  return nameRefusal(op, request, errors) ?? { status: 422, message: listViolations(named, errors.length) };
}
