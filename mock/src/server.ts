// `gitea-mock`, the package's entry: the answering mock or the proxy on a `node:http` server, composed top-down.
import { FastResponse } from 'srvx/node';
import { createAnsweringMock, documentOf, type AnsweringOptions } from './answering-node.js';
import { BASE_PROFILE, DOCUMENT } from './contract/document-file.js';
import { BASE_PATH } from './front/app.js';
import { connectionBounds, fetchHandler, listen } from './front/node-server.js';
import type { SandboxChoices } from './answering.js';
import type { ProxyOptions, ProxyReport } from './proxy/proxy.js';
import type { DeliveryRecord } from './webhooks/deliveries.js';

export { BASE_PATH };
export type { ProxyOptions, ProxyReport };
export const DEFAULT_DOCUMENT = DOCUMENT;

export interface MockOptions extends Omit<AnsweringOptions, 'sandbox'> {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: MockSandboxOptions;
  /** Forward every request to a real server and check the exchanges against the document. */
  proxy?: ProxyOptions;
  /** One line per answered request; never given credentials. */
  onRequest?: (line: string) => void;
}

export interface MockSandboxOptions extends SandboxChoices {
  /** Keep the worlds in this folder, a file per world, or in the PostgreSQL database of this URL (`postgres://…`). */
  state?: string;
  webhooks?: SandboxChoices['webhooks'] & {
    /** Hosts deliveries may go to, as Gitea's `[webhook] ALLOWED_HOST_LIST` (default `loopback`). */
    allowedHosts?: string;
    /** Longest a delivery may take, in milliseconds (default 5000, Gitea's `DELIVER_TIMEOUT`). */
    timeoutMs?: number;
    /** Each delivery once it is settled, a copy of its own; one that throws or rejects is told on the console. */
    onDelivery?: (delivery: DeliveryRecord) => unknown;
  };
}

/** An operation the mock serves: its method in upper case, its path template below /api/v1. */
export interface ServedOperation {
  operationId: string;
  method: string;
  path: string;
}

export interface MockServer {
  /** `http://host:port` */
  origin: string;
  /** `http://host:port/api/v1`, the base URL clients use. */
  baseUrl: string;
  operations: readonly ServedOperation[];
  /** With `proxy`: what the exchanges came to so far (`--report` writes it as JSON). */
  proxyReport?(): ProxyReport;
  close(): Promise<void>;
}

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const { port, host, onRequest, onWarning: warn = () => {} } = options;
  const document = documentOf(options);
  const { ceiling, maxHeld } = connectionBounds(options.maxHeld);
  if (options.proxy && typeof document !== 'string') throw new TypeError('the proxy reads its document from a file');
  let origin = '';
  let docsUrl = '';
  const mock = await createAnsweringMock({ ...options, maxHeld }, () => docsUrl, FastResponse);
  const front = { ...mock, docsUrl: () => docsUrl };
  const { createProxy } = options.proxy ? await import('./proxy/proxy.js') : {};
  // The profile checked against, unless a document of the user's is.
  const checkedAs = options.document === undefined ? (options.server ?? BASE_PROFILE) : undefined;
  const proxy = options.proxy && (await createProxy!(options.proxy, front, checkedAs));

  const handler = proxy ? proxy.handle : fetchHandler(mock.app, () => origin);
  const bounds = { ceiling, slowRequests: !!proxy, docsUrl: front.docsUrl };
  const listening = await listen(handler, { port, host, ...bounds, warn, onRequest });
  origin = listening.origin;
  docsUrl = `${origin}/api/swagger`;
  return {
    origin,
    baseUrl: `${origin}${BASE_PATH}`,
    operations: mock.table.operations,
    ...(proxy ? { proxyReport: () => proxy.report() } : {}),
    close: async () => {
      await listening.close();
      await mock.close();
      await proxy?.close();
    },
  };
}
