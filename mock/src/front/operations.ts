// The document's operations as the mock routes them: Prism's parsed operations plus what the
// launcher needs before asking Prism (a matcher per path, the documented codes and examples).
import { readFile } from 'node:fs/promises';
import type { IHttpOperation } from '@stoplight/types';

export interface MockOperation {
  operationId: string;
  method: string;
  path: string;
  matcher: RegExp;
  /** Documented status → names of its examples, in document order. */
  responses: Map<number, string[]>;
  /** List operations that page with `page`/`limit` and answer `X-Total-Count` and `Link`. */
  paginated: boolean;
  operation: IHttpOperation;
}

export type RouteResult =
  | { kind: 'match'; op: MockOperation }
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' };

function matcherFor(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Values of the placeholders of `template` in a `path` it matched, decoded. */
export function pathParams(template: string, path: string): Record<string, string> {
  const names = template.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  names.forEach((segment, index) => {
    const name = /^\{(.+)\}$/.exec(segment)?.[1];
    if (name !== undefined) params[name] = decodeURIComponent(values[index] ?? '');
  });
  return params;
}

function describe(operation: IHttpOperation): MockOperation {
  const responses = new Map<number, string[]>();
  let paginated = false;
  for (const response of operation.responses) {
    const code = Number(response.code);
    if (!Number.isInteger(code)) continue;
    const names = (response.contents ?? []).flatMap((content) => (content.examples ?? []).map((example) => example.key));
    responses.set(code, names);
    if (code === 200 && (response.headers ?? []).some((header) => header.name.toLowerCase() === 'x-total-count')) paginated = true;
  }
  return {
    operationId: operation.iid ?? operation.id,
    method: operation.method.toUpperCase(),
    path: operation.path,
    matcher: matcherFor(operation.path),
    responses: new Map([...responses].sort(([a], [b]) => a - b)),
    paginated,
    operation,
  };
}

export interface OperationTable {
  operations: MockOperation[];
  route(method: string, path: string): RouteResult;
}

/**
 * Parsed tables by document path. Mock servers started in one process (the test suites start
 * dozens) share one: parsing and dereferencing the document takes a tenth of a second, and Prism's
 * validators, compiled per schema object on first use, are then compiled once, not per server.
 * Nothing changes a table once made. A document that fails to load is not kept.
 */
const tables = new Map<string, Promise<OperationTable>>();

export function loadOperations(prismHttp: Pick<typeof import('@stoplight/prism-http'), 'getHttpOperationsFromSpec'>, documentPath: string): Promise<OperationTable> {
  let table = tables.get(documentPath);
  if (!table) {
    table = parseOperations(prismHttp, documentPath);
    tables.set(documentPath, table);
    table.catch(() => tables.delete(documentPath));
  }
  return table;
}

async function parseOperations(prismHttp: Pick<typeof import('@stoplight/prism-http'), 'getHttpOperationsFromSpec'>, documentPath: string): Promise<OperationTable> {
  const parsed = await prismHttp.getHttpOperationsFromSpec(documentPath);
  if (parsed.length === 0) throw new Error(`${documentPath} describes no operations`);
  // Paths with more literal segments first, so a literal never loses to a placeholder.
  const literals = (path: string): number => path.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
  const operations = parsed.map(describe).sort((a, b) => literals(b.path) - literals(a.path));
  return {
    operations,
    route(method, path) {
      const onPath = operations.filter((op) => op.matcher.test(path));
      if (onPath.length === 0) return { kind: 'none' };
      const op = onPath.find((candidate) => candidate.method === method);
      return op ? { kind: 'match', op } : { kind: 'method', allowed: onPath.map((candidate) => candidate.method) };
    },
  };
}

/**
 * Statuses (as `operationId status`) whose response carries `x-body-optional: true`: Gitea may send
 * them with no body even though a body is declared. Prism's parsed operations drop extensions, so
 * the document is read for them, once per document and only when an answer without a body needs it
 * (the YAML parser is not loaded at start).
 */
const bodyOptional = new Map<string, Promise<Set<string>>>();

async function readBodyOptional(documentPath: string): Promise<Set<string>> {
  const { parse } = await import('yaml');
  const doc = parse(await readFile(documentPath, 'utf8'), { maxAliasCount: -1 }) as Record<string, any>;
  const resolve = (node: any): any => (typeof node?.$ref === 'string' ? node.$ref.slice(2).split('/').reduce((at: any, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc) : node);
  const marked = new Set<string>();
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {})) {
    for (const operation of Object.values<any>(item)) {
      for (const [code, response] of Object.entries<any>(operation?.responses ?? {})) {
        if (resolve(response)?.['x-body-optional'] === true) marked.add(`${operation.operationId} ${code}`);
      }
    }
  }
  return marked;
}

export async function isBodyOptional(documentPath: string, operationId: string, status: number): Promise<boolean> {
  let marked = bodyOptional.get(documentPath);
  if (!marked) {
    marked = readBodyOptional(documentPath);
    bodyOptional.set(documentPath, marked);
    marked.catch(() => bodyOptional.delete(documentPath));
  }
  return (await marked).has(`${operationId} ${status}`);
}
