// Puts the answering mock together: Prism, the operation table, the examples or the sandbox, and
// the Fetch-API front over them. The node:http server and the MSW handlers both start from here.
import { createApp, type GiteaApp, type ResponseClass } from './app.js';
import { DOCUMENT } from '../contract/document-path.js';
import type { OperationTable } from './operations.js';
import { loadOperations } from './operations-file.js';
import { loadPrism, type Prism } from './prism.js';
import { createExamples } from '../sources/examples.js';
import { createSandbox, type SandboxControl, type SandboxOptions } from '../sources/sandbox.js';
import type { AnsweringSource } from '../sources/source.js';

export interface AnsweringOptions {
  /** The OpenAPI document to serve; defaults to the package's `openapi.yaml`. */
  document?: string;
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data repeatable. */
  seed?: string;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: SandboxOptions;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  onWarning?: (line: string) => void;
}

export interface AnsweringMock {
  app: GiteaApp;
  prism: Prism;
  table: OperationTable;
  /** The sandbox's worlds, when it answers. */
  sandbox?: SandboxControl;
  close(): Promise<void>;
}

export async function createAnsweringMock(options: AnsweringOptions, docsUrl: () => string, Response?: ResponseClass): Promise<AnsweringMock> {
  const prism = await loadPrism();
  const document = options.document ?? DOCUMENT;
  const table = await loadOperations(document);
  const context = { docsUrl };
  const examples = createExamples(prism, context, options);
  const sandbox = options.sandbox ? await createSandbox(table, examples, context, options.sandbox) : undefined;
  const source: AnsweringSource = sandbox ?? examples;
  const app = createApp({ prism, table, source, docsUrl, warn: options.onWarning ?? (() => {}), ...(Response ? { Response } : {}) });
  return { app, prism, table, ...(sandbox ? { sandbox: sandbox.control } : {}), close: async () => source.close?.() };
}
