// The document's operations in Stoplight's shape through http-spec's transform, the one Prism calls; no Node built-in.
import { transformOas3Operations } from '@stoplight/http-spec/oas3/operation';
import { bundleTarget, isPlainObject, pathToPointer, pointerToPath } from '@stoplight/json';
import type { IHttpOperation, JsonPath } from '@stoplight/types';
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

type Tree = Record<string, unknown>;

/** `value` with each object that contains itself replaced by `{$ref}` to where it first stands, as `decycle` of @stoplight/json
 * makes it; the pointer is written only for a cycle, which keeps a 6 MB tree to a tenth of `decycle`'s time. */
function decycled(value: unknown): unknown {
  const depthOf = new Map<object, number>();
  const path: string[] = [];
  const visit = (node: unknown): unknown => {
    if (!Array.isArray(node) && !isPlainObject(node)) return node;
    const depth = depthOf.get(node);
    if (depth !== undefined) return { $ref: pathToPointer(path.slice(0, depth)) };
    depthOf.set(node, path.length);
    const copy = (Array.isArray(node) ? [] : {}) as Tree;
    for (const key of Object.keys(node)) {
      path.push(key);
      copy[key] = visit((node as Tree)[key]);
      path.pop();
    }
    depthOf.delete(node);
    return copy;
  };
  return visit(value);
}

/** A deep copy of `node` that keeps which parts are one object, through `copies` (original to copy). */
function copyKeeping(node: unknown, copies: Map<object, unknown>): unknown {
  if (typeof node !== 'object' || node === null) return node;
  const known = copies.get(node);
  if (known !== undefined) return known;
  const copy = (Array.isArray(node) ? [] : {}) as Tree;
  copies.set(node, copy);
  for (const key of Object.keys(node)) copy[key] = copyKeeping((node as Tree)[key], copies);
  return copy;
}

/** Adds to `into` each local `$ref` in `node`. */
function collectRefs(node: unknown, into: Set<string>, seen: Set<object>): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node);
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#')) into.add(ref);
  for (const value of Object.values(node)) collectRefs(value, into, seen);
}

/**
 * What `bundleTarget` reads of `{...resolved, __target__: operation}` and changes in it, copied: the operation and each part
 * of `resolved` a reference from it reaches, on its path, the rest left out. `bundleTarget`'s own copy of the whole
 * document takes 20 times as long per operation; the copy keeps which parts are one object, as lodash's `cloneDeep` does,
 * so what it writes through one path shows through every other.
 */
function bundlingDocument(resolved: Tree, operation: unknown): Tree {
  const copies = new Map<object, unknown>();
  const target = copyKeeping(operation, copies);
  const refs = new Set<string>();
  const seen = new Set<object>();
  collectRefs(operation, refs, seen);
  const paths: JsonPath[] = [];
  for (const ref of refs) {
    // The whole document, which bundleTarget copies whole.
    if (ref === '#') return copyKeeping({ ...resolved, __target__: operation }, new Map()) as Tree;
    const path = pointerToPath(ref);
    const reached = path.reduce<unknown>(
      (node, key) => (typeof node === 'object' && node !== null ? (node as Tree)[key] : undefined),
      resolved,
    );
    if (reached === undefined) continue;
    paths.push(path);
    collectRefs(reached, refs, seen);
  }
  // A part that holds another is copied first, so the other's path leads through the copy.
  paths.sort((a, b) => a.length - b.length);
  const copy: Tree = {};
  for (const path of paths) {
    let from: Tree = resolved;
    let to: Tree = copy;
    for (const [index, key] of path.entries()) {
      const child = from[key];
      if (to[key] === undefined)
        to[key] =
          index === path.length - 1 || typeof child !== 'object' || child === null || copies.has(child)
            ? copyKeeping(child, copies)
            : Array.isArray(child)
              ? []
              : {};
      from = child as Tree;
      to = to[key] as Tree;
    }
  }
  copy.__target__ = target;
  return copy;
}

export function httpOperations(document: Record<string, unknown>): IHttpOperation[] {
  if (typeof document.openapi !== 'string')
    throw new Error('the document is not an OpenAPI 3 document (no `openapi` field)');
  // As Prism makes its table: cycles turned back into references, which each operation (a copy) holds in `__bundled__`.
  const resolved = decycled(dereference(document)) as Tree;
  return transformOas3Operations(resolved).map((operation) =>
    bundleTarget({ document: bundlingDocument(resolved, operation), path: '#/__target__', cloneDocument: false }),
  );
}
