import type { IHttpOperation } from '@stoplight/types';
import { answerChecks } from '../contract/conformance.js';
import { deref, isObject, listOperations, type JsonObject } from '../contract/document.js';

export type MockOperation = ReturnType<typeof describe>;

const placeholders = new Map<string, [index: number, name: string][]>();

export function pathParams(template: string, path: string): Record<string, string> {
  const named =
    placeholders.get(template) ??
    template.split('/').flatMap((segment, index): [number, string][] => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      return name === undefined ? [] : [[index, name]];
    });
  placeholders.set(template, named);
  const values = path.split('/');
  return Object.fromEntries(named.map(([index, name]) => [name, decodeURIComponent(values[index] ?? '')]));
}

function describe(operation: IHttpOperation) {
  const responses = new Map<number, string[]>();
  for (const { code, contents } of operation.responses) {
    const names = (contents ?? []).flatMap(({ examples = [] }) => examples.map((example) => example.key));
    if (Number.isInteger(Number(code))) responses.set(Number(code), names);
  }
  const paginated = operation.responses.some(
    ({ code, headers }) =>
      Number(code) === 200 && (headers ?? []).some((header) => header.name.toLowerCase() === 'x-total-count'),
  );
  const matcher = operation.path
    .split('/')
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return {
    operationId: operation.iid ?? operation.id,
    method: operation.method.toUpperCase(),
    path: operation.path,
    matcher: new RegExp(`^${matcher}$`),
    /** Status → names of its examples. */
    responses: new Map([...responses].sort(([a], [b]) => a - b)),
    paginated,
    operation,
  };
}

export type OperationTable = ReturnType<typeof operationTable>;

/** `parsed`: `httpOperations(document)`, or the build's twin. */
export function operationTable(document: Record<string, unknown>, parsed: IHttpOperation[]) {
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
  const checks = answerChecks(doc);
  return {
    /** For what the table does not hold (the sandbox reads its `webhooks:`). */
    document,
    operations,
    route(method: string, path: string) {
      const onPath = operations.filter((op) => op.matcher.test(path));
      if (onPath.length === 0) return { kind: 'none' } as const;
      const op = onPath.find((candidate) => candidate.method === method);
      return op
        ? ({ kind: 'match', op } as const)
        : ({ kind: 'method', allowed: onPath.map((candidate) => candidate.method) } as const);
    },
    /** `x-body-optional: true` (Gitea may send no body), read from the document: the transform drops extensions. */
    isBodyOptional: (operationId: string, status: number): boolean => bodyOptional.has(`${operationId} ${status}`),
    checkAnswer: checks.check,
    /** A body as the document shapes it (the records of a server profile). */
    fitAnswer: checks.fit,
  };
}
