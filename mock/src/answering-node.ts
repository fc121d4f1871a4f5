// The answering mock in Node (the node:http server, the MSW handlers under Node): the document
// read from its file, and what only Node has: worker threads for large markdown renders, V8's
// heap size for the sandbox's budget, Prism's generator for dynamic answers, the state folder, and
// the sending of webhook deliveries.
import { DOCUMENT, loadOperations, operationsOf, readDocumentFile } from './contract/document-file.js';
import { createAnswering, type AnsweringChoices, type AnsweringMock, type AnsweringPlatform } from './answering.js';
import type { ResponseClass } from './front/app.js';
import { operationTable, type OperationTable } from './front/operations.js';
import { seedText } from './front/conditions.js';
import { loadGenerator } from './examples/dynamic.js';
import { heapLimit } from './common/heap.js';
import { createMarkdownRenderer } from './sandbox/markdown.js';
import { openStateStore } from './sandbox/world-store.js';
import { createNodeTransport } from './webhooks/transport-node.js';

export type { AnsweringMock };

export interface AnsweringOptions extends Omit<AnsweringChoices, 'seed'> {
  /** Makes dynamic data, random delays and random faults repeatable: `7` and `'7'` are one seed, as `--seed 7` is. */
  seed?: string | number;
  /** The OpenAPI document to serve: a file (YAML or JSON), or the document as data; defaults to the package's `openapi.yaml`. */
  document?: string | Record<string, unknown>;
}

const NODE_PLATFORM: AnsweringPlatform = {
  markdown: createMarkdownRenderer,
  heapLimit: heapLimit(),
  generator: loadGenerator,
  webhookTransport: createNodeTransport,
  openStore: openStateStore,
};

/**
 * Tables by the document's text. Mock servers started in one process (the suites start dozens)
 * share one: the validators, compiled per schema object on first use, are then compiled once, not
 * per server. Nothing changes a table once made.
 */
const tables = new Map<string, OperationTable>();

/** The operation table of a document: a file (YAML or JSON), made once per distinct text, or the document as data. */
export async function operationTableOf(document: string | Record<string, unknown> = DOCUMENT): Promise<OperationTable> {
  if (typeof document === 'object') return operationTable(document, await operationsOf(document));
  const file = readDocumentFile(document);
  let table = tables.get(file.sha256);
  if (!table) {
    try {
      table = operationTable(file.document, await loadOperations(document));
    } catch (error) {
      throw new Error(`${document}: ${error instanceof Error ? error.message : String(error)}`);
    }
    tables.set(file.sha256, table);
  }
  return table;
}

export async function createAnsweringMock(
  options: AnsweringOptions,
  docsUrl: () => string,
  Response?: ResponseClass,
): Promise<AnsweringMock> {
  const { seed: given, ...choices } = options;
  const seed = seedText(given);
  const table = await operationTableOf(options.document);
  // The state store holds records of the served document's schemas.
  const sandbox = options.sandbox && {
    ...options.sandbox,
    ...(typeof options.document === 'string' ? { document: options.document } : {}),
  };
  return createAnswering(
    table,
    NODE_PLATFORM,
    { ...choices, ...(seed === undefined ? {} : { seed }), ...(sandbox ? { sandbox } : {}) },
    docsUrl,
    Response,
  );
}
