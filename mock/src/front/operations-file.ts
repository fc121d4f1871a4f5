// The operation table of a document file (YAML or JSON), for the Node side: the server, the MSW
// handlers under Node read the document from disk. The browser build
// makes its table from the document bundled as data (operations.ts has no file access).
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { operationTable, type OperationTable } from './operations.js';

/**
 * Parsed tables by document path. Mock servers started in one process (the test suites start
 * dozens) share one: parsing and transforming the document takes a few tenths of a second, and the
 * validators, compiled per schema object on first use, are then compiled once, not per server.
 * Nothing changes a table once made. A document that fails to load is not kept.
 */
const tables = new Map<string, Promise<OperationTable>>();

/** The table of the document at a file path (YAML or JSON), read once per path. */
export function loadOperations(documentPath: string): Promise<OperationTable> {
  let table = tables.get(documentPath);
  if (!table) {
    table = (async () => {
      let text: string;
      try {
        text = await readFile(documentPath, 'utf8');
      } catch (error) {
        throw new Error(`cannot read the document ${documentPath}: ${error instanceof Error ? error.message : String(error)}`);
      }
      const document = parse(text, { maxAliasCount: -1 }) as unknown;
      if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error(`${documentPath} is not an OpenAPI document`);
      try {
        return operationTable(document as Record<string, unknown>);
      } catch (error) {
        throw new Error(`${documentPath}: ${error instanceof Error ? error.message : String(error)}`);
      }
    })();
    tables.set(documentPath, table);
    table.catch(() => tables.delete(documentPath));
  }
  return table;
}
