// The mock's operation table without Prism (mock/src/contract/http-operations.ts): the same
// IHttpOperation objects Prism's getHttpOperationsFromSpec makes of openapi.yaml, and code that
// bundles for a browser with no Node built-in.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { httpOperations, operationTable, readDocumentFile } from '../test/support/mock-internals.js';

const DOCUMENT = new URL('../openapi.yaml', import.meta.url);
// Parsed and transformed once for the file: each takes most of a second.
const parsed = parse(await readFile(DOCUMENT, 'utf8'), { maxAliasCount: -1 }) as Record<string, unknown>;
const ours = httpOperations(parsed);

/**
 * The operations as JSON, without the ids the transform derives by hashing where it met each
 * object (Prism meets them through its own ref parser), and without descriptions, which Prism's ref
 * parser takes from a `$ref`'s target where OpenAPI 3.1 lets the `$ref`'s own description win.
 */
const comparable = (operations: unknown): unknown =>
  JSON.parse(
    JSON.stringify(operations, (key, value: unknown) =>
      key === 'id' || key === 'x-stoplight' || key === 'description' ? undefined : value,
    ),
  );

describe('the operation table without Prism', () => {
  it('is what Prism makes of openapi.yaml: every operation, parameter, schema, example and bundled cycle', async () => {
    const prisms = await getHttpOperationsFromSpec(fileURLToPath(DOCUMENT));
    expect(ours.map((op) => op.iid)).toEqual(prisms.map((op) => op.iid));
    expect(ours).toHaveLength(20);
    // A repository's `parent` is the one schema that contains itself: it stays a reference, bundled.
    expect(JSON.stringify(ours)).toContain('"$ref":"#/__bundled__/');
    expect(comparable(ours)).toEqual(comparable(prisms));
  }, 30_000);

  it("is what the build's twin of the document holds, which a start with that document reads instead", async () => {
    // mock/dist/document.json, written by the package's build: the global setup keeps it current.
    const twin = JSON.parse(await readFile(new URL('../mock/dist/document.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const text = await readFile(DOCUMENT, 'utf8');
    expect(Object.keys(twin).sort()).toEqual(['document', 'operations', 'sha256']);
    expect(twin.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(twin.document).toEqual(parsed);
    // As JSON: the twin is JSON, which keeps no `undefined` value.
    expect(twin.operations).toEqual(JSON.parse(JSON.stringify(ours)));
    // What the server, the proxy and live mode read for openapi.yaml is the twin's.
    const read = readDocumentFile(fileURLToPath(DOCUMENT));
    expect(read.operations).toBe((readDocumentFile(fileURLToPath(DOCUMENT)) as { operations: unknown }).operations);
    expect(read.operations).toEqual(twin.operations);
  }, 30_000);

  it('routes and knows the statuses Gitea may send without a body', async () => {
    const table = operationTable(parsed, ours);
    const route = table.route('GET', '/repos/acme/rocket/keys/11001');
    expect(route.kind === 'match' && route.op.operationId).toBe('repoGetKey');
    expect(table.route('PUT', '/repos/acme/rocket/keys/11001')).toEqual({ kind: 'method', allowed: ['GET'] });
    expect(table.route('GET', '/nowhere')).toEqual({ kind: 'none' });
    const marked = table.operations.flatMap((op) =>
      [...op.responses.keys()]
        .filter((status) => table.isBodyOptional(op.operationId, status))
        .map((status) => `${op.operationId} ${status}`),
    );
    expect(marked.sort()).toEqual([
      'issueListIssueCommentAttachments 200',
      'issueRemoveAssignees 403',
      'renderMarkdown 200',
      'repoEditPullRequest 403',
    ]);
  }, 30_000);

  it('bundles for a browser with no Node built-in', async () => {
    const entry = fileURLToPath(new URL('../mock/src/front/operations.ts', import.meta.url));
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    const imports = Object.values(result.metafile.inputs).flatMap((input) =>
      input.imports.map((imported) => imported.path),
    );
    expect(imports.filter((path) => path.startsWith('node:') || builtins.has(path))).toEqual([]);
    expect(result.outputFiles[0]!.text.length).toBeGreaterThan(0);
  }, 30_000);
});
