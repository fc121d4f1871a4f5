// The mock's modules that the suites reach beyond its entry points (server.ts, msw/handlers.ts),
// in one place: a module that moves inside mock/src changes this file, not the suites.
import { fileURLToPath } from 'node:url';
import { readDocumentFile } from '../../mock/src/contract/document-file.js';
import type { JsonObject } from '../../mock/src/contract/document.js';
export { createAnsweringMock, heapLimit, operationTableOf } from '../../mock/src/answering-node.js';
export {
  base64Text,
  indexOfBytes,
  latin1Bytes,
  latin1Text,
  randomUuid,
  utf8Length,
} from '../../mock/src/common/bytes.js';
export { keyOf } from '../../mock/src/common/credential-key.js';
export { outputFileProblem } from '../../mock/src/common/options.js';
export { describeViolation, mismatches } from '../../mock/src/contract/conformance.js';
export { loadOperations, readDocumentFile } from '../../mock/src/contract/document-file.js';
export {
  deref,
  escapePointerSegment,
  isObject,
  type Json,
  type JsonObject,
  listOperations,
  listWebhooks,
  type Operation,
  operationParameters,
  pointer,
  resolvePointer,
} from '../../mock/src/contract/document.js';
export { httpOperations } from '../../mock/src/contract/http-operations.js';
export { createSchemaValidator } from '../../mock/src/contract/schema.js';
export { loadPrismMocker } from '../../mock/src/examples/dynamic.js';
export { NO_GENERATOR } from '../../mock/src/examples/examples.js';
export { documentedAnswer, type Mocked, type Wanted } from '../../mock/src/examples/negotiation.js';
export { MOCK_VERSION } from '../../mock/src/front/server-profile.js';
export { createBodyBudget, defaultBodyBudget, MAX_BODY_BYTES, parseMediaType } from '../../mock/src/front/body.js';
export { createConditions, faultsOption, latencyOption } from '../../mock/src/front/conditions.js';
export { createJournal, JOURNAL_ENTRIES, type JournalEntry, JOURNALS } from '../../mock/src/front/journal.js';
export { operationTable } from '../../mock/src/front/operations.js';
export { secretNameProblem, usernameProblem } from '../../mock/src/front/validation.js';
export { junitXml, type RunRecord } from '../../mock/src/live/junit.js';
export { readCredentials, refusedLine } from '../../mock/src/live/verify.js';
export { extname } from '../../mock/src/msw/path-extname.js';
export { checkUpstream } from '../../mock/src/proxy/proxy.js';
export { parseGoInt } from '../../mock/src/sandbox/backend.js';
export { MARKDOWN_LIMITS, sniffedType } from '../../mock/src/sandbox/markdown-render.js';
export { createMarkdownRenderer } from '../../mock/src/sandbox/markdown.js';
export { inFlightBudget } from '../../mock/src/sandbox/sandbox-limits.js';
export type { SandboxOptions } from '../../mock/src/sandbox/sandbox.js';
export type { Backing } from '../../mock/src/sandbox/store.js';
export { copyJson, keepUnchanged, worldBytes, worldChange, worldText } from '../../mock/src/sandbox/world-json.js';
export { readChanges } from '../../mock/src/sandbox/world-check.js';
export { seedWorld, type World } from '../../mock/src/sandbox/world.js';
export { hostMatcher } from '../../mock/src/webhooks/allowed-hosts.js';
export type { DeliveryRecord } from '../../mock/src/webhooks/deliveries.js';

/** The document in a file, as a copy of its own to change at will. */
export const loadDocument = (url: URL): JsonObject => structuredClone(readDocumentFile(fileURLToPath(url)).document);

/** The document for a test file: a load failure is returned, not thrown, so each test can report it. */
export function tryLoadDocument(url: URL): { doc: JsonObject; error?: string } {
  try {
    return { doc: loadDocument(url) };
  } catch (error) {
    return { doc: {}, error: error instanceof Error ? error.message : String(error) };
  }
}
