// `gitea-mock/msw` in Node (setupServer in a test runner, no server process): the handlers of
// core.ts over the mock as the server starts it (front/answering-node.ts): the document read from
// its file, large markdown rendered in worker threads, Prism's generator for dynamic answers.
// Browsers get browser.ts instead (the package's `browser` export condition).
import { createAnsweringMock } from '../answering-node.js';
import { createHandlersWith, type GiteaHandlers, type GiteaHandlersOptions } from './core.js';

export type { DeliveryRecord, GiteaHandlers, GiteaHandlersOptions, JournalEntry, World } from './core.js';

export function createGiteaHandlers(options: GiteaHandlersOptions): GiteaHandlers {
  return createHandlersWith(options, (start, docsUrl) => createAnsweringMock(start, docsUrl));
}
