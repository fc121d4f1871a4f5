// The operation table of a document file (YAML or JSON), for the Node side: the server, the MSW
// handlers under Node read the document from disk. The browser build
// makes its table from the document bundled as data (operations.ts has no file access).
import type { IHttpOperation } from '@stoplight/types';
import { readDocumentFile } from '../contract/document-file.js';
import { operationTable, type OperationTable } from './operations.js';

/**
 * Tables by the document's text. Mock servers started in one process (the test suites start
 * dozens) share one: the validators, compiled per schema object on first use, are then compiled
 * once, not per server. Nothing changes a table once made.
 */
const tables = new Map<string, OperationTable>();

/**
 * The operations of a document given as data, in Stoplight's shape. The transform (http-spec and
 * its share of lodash, a twentieth of a start) loads only for a document the build did not twin.
 */
export async function operationsOf(document: Record<string, unknown>): Promise<IHttpOperation[]> {
  const { httpOperations } = await import('../contract/http-operations.js');
  return httpOperations(document);
}

/** The table of the document at a file path (YAML or JSON), made once per distinct text. */
export async function loadOperations(documentPath: string): Promise<OperationTable> {
  const { document, operations, sha256 } = readDocumentFile(documentPath);
  let table = tables.get(sha256);
  if (!table) {
    try {
      table = operationTable(document, operations ?? (await operationsOf(document)));
    } catch (error) {
      throw new Error(`${documentPath}: ${error instanceof Error ? error.message : String(error)}`);
    }
    tables.set(sha256, table);
  }
  return table;
}
