// The answering mock put together over the Fetch front, with no Node built-in: the browser build starts here.
import { createApp, type AnsweringSource, type ResponseClass } from './front/app.js';
import { createBodyBudget, defaultBodyBudget } from './front/body.js';
import { createConditions, type ConditionOptions } from './front/conditions.js';
import { createJournal } from './front/journal.js';
import type { OperationTable } from './front/operations.js';
import { createExamples, type Generator } from './examples/examples.js';
import { createSandbox, type SandboxOptions, type SandboxPlatform } from './sandbox/sandbox.js';
import type { WebhookOptions } from './webhooks/deliveries.js';

/** The sandbox's bounds and seed, as both entries take them. */
export type SandboxChoices = Omit<SandboxOptions, 'state' | 'store' | 'document' | 'webhooks'> & {
  /** The hooks' secret, which signs the deliveries, and system hooks that get every event. */
  webhooks?: Pick<WebhookOptions, 'secret' | 'systemHooks'>;
};

/** What differs by runtime: with Prism's generator of dynamic answers where it loads (Node). */
export type AnsweringPlatform = SandboxPlatform & { generator?: () => Promise<Generator> };

export interface AnsweringChoices extends Omit<ConditionOptions, 'seed'> {
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data, random delays and random faults repeatable. */
  seed?: string;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: SandboxOptions;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  onWarning?: (line: string) => void;
  /** Bytes of request bodies held at once, being read or waiting for their answer (default: an eighth of V8's heap). */
  maxBodyBytesInFlight?: number;
}

/** The front over its source; the conditions, journal and body budget serve the proxy too. */
export type AnsweringMock = Awaited<ReturnType<typeof createAnswering>>;

export async function createAnswering(
  table: OperationTable,
  platform: AnsweringPlatform,
  options: AnsweringChoices,
  docsUrl: () => string,
  Response?: ResponseClass,
) {
  // Checked first: options that do not fit throw before anything starts.
  const conditions = createConditions(options);
  const bodies = createBodyBudget(options.maxBodyBytesInFlight ?? defaultBodyBudget(platform.heapLimit));
  const context = { docsUrl };
  const examples = await createExamples(context, { ...options, generator: platform.generator });
  const sandbox = options.sandbox && (await createSandbox(table, examples, context, platform, options.sandbox));
  const source: AnsweringSource = sandbox ?? examples;
  const journal = createJournal();
  const shared = { table, conditions, journal, bodies };
  const warn = options.onWarning ?? (() => {});
  const app = createApp({ ...shared, source, docsUrl, warn, ...(Response ? { Response } : {}) });
  return { app, ...shared, ...(sandbox ? { sandbox: sandbox.control } : {}), close: async () => source.close?.() };
}
