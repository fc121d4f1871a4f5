// The document's operations in Stoplight's shape through http-spec's transform, the one Prism calls; no Node built-in.
import { transformOas3Operations } from '@stoplight/http-spec/oas3/operation';
import { bundleTarget, decycle } from '@stoplight/json';
import type { IHttpOperation } from '@stoplight/types';
import { resolvePointer, type Json } from './document.js';

/** A copy of `document`, each `$ref` replaced by its one object per target, as Prism's ref parser gives it. */
function dereference<T>(document: T): T {
  const done = new Map<unknown, unknown>();
  const resolving = new Set<unknown>();
  const visit = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (!ref.startsWith('#')) throw new Error(`only local references are supported, not ${JSON.stringify(ref)}`);
      const target = resolvePointer(document as Json, ref);
      if (target === undefined) throw new Error(`the reference ${ref} leads nowhere`);
      // A schema that contains itself becomes a cycle of objects, as the ref parser makes it.
      if (resolving.has(target)) return done.get(target);
      const siblings = Object.keys(node).filter((key) => key !== '$ref');
      const resolved = visit(target);
      if (siblings.length === 0 || typeof resolved !== 'object' || resolved === null) return resolved;
      // OpenAPI 3.1 lets a reference carry a description or a summary beside it, which wins.
      const copy: Record<string, unknown> = { ...(resolved as Record<string, unknown>) };
      for (const key of siblings) copy[key] = visit((node as Record<string, unknown>)[key]);
      return copy;
    }
    const seen = done.get(node);
    if (seen !== undefined) return seen;
    resolving.add(node);
    const copy = (Array.isArray(node) ? [] : {}) as Record<string, unknown>;
    done.set(node, copy);
    for (const [key, value] of Object.entries(node)) copy[key] = visit(value);
    resolving.delete(node);
    return copy;
  };
  return visit(document) as T;
}

export function httpOperations(document: Record<string, unknown>): IHttpOperation[] {
  if (typeof document.openapi !== 'string')
    throw new Error('the document is not an OpenAPI 3 document (no `openapi` field)');
  // As Prism makes its table: cycles turned back into references, which each operation (a copy) holds in `__bundled__`.
  const resolved = decycle(dereference(document)) as Record<string, unknown>;
  return transformOas3Operations(resolved).map((operation) =>
    bundleTarget({ document: { ...resolved, __target__: operation }, path: '#/__target__', cloneDocument: true }),
  );
}
