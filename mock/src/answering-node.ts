// The answering mock in Node: the document from its file, markdown workers, the heap, the generator, the store.
import type { ServerProfile } from 'gitea-contract';
import { DOCUMENT, loadOperations, operationsOf, profileDocument, readDocumentFile } from './contract/document-file.js';
import { createAnswering, type AnsweringChoices, type AnsweringMock, type AnsweringPlatform } from './answering.js';
import type { ResponseClass } from './front/app.js';
import { operationTable, type OperationTable } from './front/operations.js';
import { seedText } from './front/conditions.js';
import { loadPrismMocker } from './examples/dynamic.js';
import { getHeapStatistics } from 'node:v8';
import { createMarkdownRenderer } from './sandbox/markdown.js';
import { openStateStore } from './sandbox/world-store.js';
import { createNodeTransport } from './webhooks/transport-node.js';

export interface AnsweringOptions extends Omit<AnsweringChoices, 'seed'> {
  /** Makes dynamic data, random delays and random faults repeatable: `7` and `'7'` are one seed, as `--seed 7` is. */
  seed?: string | number;
  /** The OpenAPI document to serve: a file (YAML or JSON) or the document as data; the package's `openapi.yaml` by default. */
  document?: string | Record<string, unknown>;
  /** The server to be (`forgejo-11`, `gitea-1.24` …: SERVER_PROFILES): its profile's document, version endpoints and router. */
  server?: ServerProfile;
}

/** The document `options` name: the server's profile, the document given, or the package's. */
export function documentOf({ document, server }: Pick<AnsweringOptions, 'document' | 'server'>) {
  if (server === undefined) return document ?? DOCUMENT;
  if (document !== undefined) throw new TypeError('give server or document, not both: a server names its own document');
  return profileDocument(server);
}

/** V8's heap limit, which bounds the sandbox's worlds together (sandbox-limits.ts). */
export const heapLimit = (): number => getHeapStatistics().heap_size_limit;

const NODE_PLATFORM: AnsweringPlatform = {
  markdown: createMarkdownRenderer,
  heapLimit: heapLimit(),
  generator: () => loadPrismMocker(true),
  webhookTransport: createNodeTransport,
  openStore: openStateStore,
};

/** Tables by the document's text: servers of one process share one, and so its validators, compiled on first use. */
const tables = new Map<string, OperationTable>();

/** The operation table of a document: a file (YAML or JSON), made once per distinct text, or the document as data. */
export async function operationTableOf(document: string | Record<string, unknown> = DOCUMENT): Promise<OperationTable> {
  if (typeof document === 'object') return operationTable(document, await operationsOf(document));
  const file = readDocumentFile(document);
  if (tables.has(file.sha256)) return tables.get(file.sha256)!;
  try {
    tables.set(file.sha256, operationTable(file.document, await loadOperations(document)));
  } catch (error) {
    throw new Error(`${document}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return tables.get(file.sha256)!;
}

export async function createAnsweringMock(
  options: AnsweringOptions,
  docsUrl: () => string,
  Response?: ResponseClass,
): Promise<AnsweringMock> {
  const { seed: given, server: _named, document: _given, ...choices } = options;
  const seed = seedText(given);
  const document = documentOf(options);
  const table = await operationTableOf(document);
  // The state store holds records of the served document's schemas.
  const sandbox = options.sandbox && { ...options.sandbox, ...(typeof document === 'string' ? { document } : {}) };
  const chosen = { ...choices, ...(seed === undefined ? {} : { seed }), ...(sandbox ? { sandbox } : {}) };
  return createAnswering(table, NODE_PLATFORM, chosen, docsUrl, Response);
}
