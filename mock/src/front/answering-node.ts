// The answering mock in Node (the node:http server, the MSW handlers under Node): the document
// read from its file, and what only Node has: worker threads for large markdown renders, V8's
// heap size for the sandbox's budget, Prism's generator for dynamic answers, the state folder, and
// the sending of webhook deliveries.
import { DOCUMENT } from '../contract/document-path.js';
import { createAnswering, type AnsweringChoices, type AnsweringMock, type AnsweringPlatform } from './answering.js';
import type { ResponseClass } from './app.js';
import { operationTable, type OperationTable } from './operations.js';
import { loadOperations, operationsOf } from './operations-file.js';
import { loadGenerator } from '../sources/dynamic.js';
import { heapLimit } from '../sources/heap.js';
import { createMarkdownRenderer } from '../sources/markdown.js';
import { worldBudget } from '../sources/sandbox-limits.js';
import { openStateStore } from '../sources/open-state.js';
import { createNodeTransport } from '../webhooks/transport-node.js';

export type { AnsweringMock };

export interface AnsweringOptions extends AnsweringChoices {
  /** The OpenAPI document to serve: a file (YAML or JSON), or the document as data; defaults to the package's `openapi.yaml`. */
  document?: string | Record<string, unknown>;
}

const NODE_PLATFORM: AnsweringPlatform = {
  markdown: createMarkdownRenderer,
  heapLimit: heapLimit(),
  generator: loadGenerator,
  webhookTransport: createNodeTransport,
};

export async function createAnsweringMock(
  options: AnsweringOptions,
  docsUrl: () => string,
  Response?: ResponseClass,
): Promise<AnsweringMock> {
  const table: OperationTable =
    typeof options.document === 'object'
      ? operationTable(options.document, await operationsOf(options.document))
      : await loadOperations(options.document ?? DOCUMENT);
  let sandbox = options.sandbox;
  if (sandbox?.state !== undefined && sandbox.store === undefined) {
    const maxWorlds = sandbox.maxWorlds ?? 100;
    // Limits that do not fit are refused before the folder is locked.
    const maxWorldBytes = worldBudget(maxWorlds, sandbox.maxWorldBytes, NODE_PLATFORM.heapLimit);
    sandbox = {
      ...sandbox,
      store: await openStateStore(sandbox.state, {
        maxWorlds,
        maxWorldBytes,
        document: sandbox.document ?? DOCUMENT,
      }),
    };
  }
  try {
    return await createAnswering(
      table,
      NODE_PLATFORM,
      { ...options, ...(sandbox ? { sandbox } : {}) },
      docsUrl,
      Response,
    );
  } catch (error) {
    // A folder this call locked is let go again.
    if (sandbox?.store !== options.sandbox?.store) await sandbox?.store?.close();
    throw error;
  }
}
