// `gitea-mock/msw` in browsers (setupWorker, Storybook), the package's `browser` export condition:
// the handlers of core.ts over the same answering mock as in Node (front/answering.ts: the front,
// Prism's validator, the examples source, the sandbox), started from the package's document
// bundled as data, with what a browser has: markdown rendered on the page's thread within the same
// byte bounds, no heap size to budget worlds by (each gets 16 MiB, or `maxWorldBytes`), and no
// generator of dynamic data (Prism's does not run in a browser). Built as one self-contained file
// (mock/tsdown.config.ts), msw left to the app as the peer it is.
import bundledDocument from 'gitea-contract/openapi.yaml';
import { httpOperations } from '../contract/http-operations.js';
import { createAnswering, type AnsweringPlatform } from '../answering.js';
import { operationTable, type OperationTable } from '../front/operations.js';
import { NO_GENERATOR } from '../examples/examples.js';
import { createInlineRenderer } from '../sandbox/markdown-inline.js';
import { createHandlersWith, type GiteaHandlers, type GiteaHandlersOptions } from './core.js';

export type { DeliveryRecord, GiteaHandlers, GiteaHandlersOptions, JournalEntry, World } from './core.js';

const BROWSER_PLATFORM: AnsweringPlatform = { markdown: createInlineRenderer, heapLimit: undefined };

/** The package's own table, made once, on the first request of the first handlers. */
let ownTable: OperationTable | undefined;

export function createGiteaHandlers(options: GiteaHandlersOptions): GiteaHandlers {
  if (options.dynamic) throw new TypeError(`gitea-mock/msw: ${NO_GENERATOR}`);
  if (typeof options.document === 'string')
    throw new TypeError(
      'gitea-mock/msw: in a browser, give `document` as data (the parsed JSON or YAML), not a file path',
    );
  const document = options.document;
  return createHandlersWith(options, async (start, docsUrl) => {
    const tableOf = (data: Record<string, unknown>): OperationTable => operationTable(data, httpOperations(data));
    const table = document === undefined ? (ownTable ??= tableOf(bundledDocument)) : tableOf(document);
    return createAnswering(table, BROWSER_PLATFORM, start, docsUrl);
  });
}
