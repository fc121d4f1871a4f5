// `gitea-mock/msw` in Node: the handlers of core.ts over the mock as the server starts it; browsers get browser.ts.
import { createAnsweringMock, documentOf } from '../answering-node.js';
import { createHandlersWith, type GiteaHandlers, type GiteaHandlersOptions } from './core.js';

export type { DeliveryRecord, GiteaHandlers, GiteaHandlersOptions, JournalEntry, World } from './core.js';

export function createGiteaHandlers(options: GiteaHandlersOptions): GiteaHandlers {
  documentOf(options); // what names no document throws now, not at the first request
  return createHandlersWith(options, createAnsweringMock);
}
