import type { IHttpOperation } from '@stoplight/types';
import { answerChecker } from '../contract/conformance.js';
import { deref, isObject, listOperations, type JsonObject } from '../contract/document.js';

export interface MockOperation {
  operationId: string;
  method: string;
  path: string;
  matcher: RegExp;
  /** Status → names of its examples. */
  responses: Map<number, string[]>;
  paginated: boolean;
  operation: IHttpOperation;
}

const placeholders = new Map<string, [index: number, name: string][]>();

export function pathParams(template: string, path: string): Record<string, string> {
  let named = placeholders.get(template);
  if (!named) {
    named = template.split('/').flatMap((segment, index): [number, string][] => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      return name === undefined ? [] : [[index, name]];
    });
    placeholders.set(template, named);
  }
  const values = path.split('/');
  return Object.fromEntries(named.map(([index, name]) => [name, decodeURIComponent(values[index] ?? '')]));
}

function describe(operation: IHttpOperation): MockOperation {
  const responses = new Map<number, string[]>();
  let paginated = false;
  for (const response of operation.responses) {
    const code = Number(response.code);
    if (!Number.isInteger(code)) continue;
    const names = (response.contents ?? []).flatMap(({ examples = [] }) => examples.map((example) => example.key));
    responses.set(code, names);
    paginated ||=
      code === 200 && (response.headers ?? []).some((header) => header.name.toLowerCase() === 'x-total-count');
  }
  const matcher = operation.path
    .split('/')
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return {
    operationId: operation.iid ?? operation.id,
    method: operation.method.toUpperCase(),
    path: operation.path,
    matcher: new RegExp(`^${matcher}$`),
    responses: new Map([...responses].sort(([a], [b]) => a - b)),
    paginated,
    operation,
  };
}

export interface OperationTable {
  /** For what the table does not hold (the sandbox reads its `webhooks:`). */
  document: Record<string, unknown>;
  operations: MockOperation[];
  route(
    method: string,
    path: string,
  ): { kind: 'match'; op: MockOperation } | { kind: 'method'; allowed: string[] } | { kind: 'none' };
  /** `x-body-optional: true` (Gitea may send no body), read from the document: the transform drops extensions. */
  isBodyOptional(operationId: string, status: number): boolean;
  checkAnswer: ReturnType<typeof answerChecker>;
}

/** `parsed`: `httpOperations(document)`, or the build's twin. */
export function operationTable(document: Record<string, unknown>, parsed: IHttpOperation[]): OperationTable {
  if (parsed.length === 0) throw new Error('the document describes no operations');
  // Paths with more literal segments first, so a literal never loses to a placeholder.
  const literals = (path: string): number => path.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
  const operations = parsed.map(describe).sort((a, b) => literals(b.path) - literals(a.path));
  const doc = document as JsonObject;
  const bodyOptional = new Set<string>();
  for (const { operation } of listOperations(doc))
    for (const [code, response] of Object.entries(isObject(operation.responses) ? operation.responses : {}))
      if ((deref(doc, response, '').value as JsonObject)?.['x-body-optional'] === true)
        bodyOptional.add(`${operation.operationId} ${code}`);
  return {
    document,
    operations,
    route(method, path) {
      const onPath = operations.filter((op) => op.matcher.test(path));
      if (onPath.length === 0) return { kind: 'none' };
      const op = onPath.find((candidate) => candidate.method === method);
      return op ? { kind: 'match', op } : { kind: 'method', allowed: onPath.map((candidate) => candidate.method) };
    },
    isBodyOptional: (operationId, status) => bodyOptional.has(`${operationId} ${status}`),
    checkAnswer: answerChecker(doc),
  };
}
