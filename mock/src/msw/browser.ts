// `gitea-mock/msw` in browsers: core.ts over answering.ts from the bundled document; msw is the app's peer.
import bundledDocument from 'gitea-contract/openapi.yaml';
import { httpOperations } from '../contract/http-operations.js';
import { createAnswering } from '../answering.js';
import { operationTable, type OperationTable } from '../front/operations.js';
import { NO_GENERATOR } from '../examples/examples.js';
import { createInlineRenderer } from '../sandbox/markdown-render.js';
import { createHandlersWith, type GiteaHandlers, type GiteaHandlersOptions } from './core.js';

export type { DeliveryRecord, GiteaHandlers, GiteaHandlersOptions, JournalEntry, World } from './core.js';

let ownTable: OperationTable | undefined;

export function createGiteaHandlers(options: GiteaHandlersOptions): GiteaHandlers {
  if (options.dynamic) throw new TypeError(`gitea-mock/msw: ${NO_GENERATOR}`);
  if (options.server !== undefined)
    throw new TypeError(
      `gitea-mock/msw: in a browser, give the profile's document as data: import document from 'gitea-mock/profiles/${options.server}.json'`,
    );
  if (typeof options.document === 'string')
    throw new TypeError(
      'gitea-mock/msw: in a browser, give `document` as data (the parsed JSON or YAML), not a file path',
    );
  const document = options.document;
  return createHandlersWith(options, async (start, docsUrl) => {
    const tableOf = (data: Record<string, unknown>): OperationTable => operationTable(data, httpOperations(data));
    const table = document === undefined ? (ownTable ??= tableOf(bundledDocument)) : tableOf(document);
    return createAnswering(table, { markdown: createInlineRenderer, heapLimit: undefined }, start, docsUrl);
  });
}
