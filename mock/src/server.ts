// `gitea-mock`, the package's entry: the mock as a `node:http` server. What answers is composed
// here, top-down: the answering mock (answering-node.ts: the document, the source, the store, the
// deliveries), or the proxy in front of a real server, then the socket (front/node-server.ts). The
// proxy takes requests whole (it streams them to the upstream), with the same CORS and error
// dialect, conditions and journal, and the front lends it the router and its request check.
import { FastResponse } from 'srvx/node';
import { createAnsweringMock } from './answering-node.js';
import { DOCUMENT } from './contract/document-file.js';
import { BASE_PATH } from './front/app.js';
import type { ConditionOptions } from './front/conditions.js';
import { connectionBounds, fetchHandler, listen } from './front/node-server.js';
import type { SandboxChoices } from './answering.js';
import type { ProxyOptions, ProxyReport } from './proxy/proxy.js';
import type { DeliveryRecord } from './webhooks/deliveries.js';

export { BASE_PATH };
export type { ProxyOptions, ProxyReport };
export const DEFAULT_DOCUMENT = DOCUMENT;

export interface MockOptions extends Omit<ConditionOptions, 'seed'> {
  /** The OpenAPI document to serve: a file (YAML or JSON), or the document as data; defaults to the package's `openapi.yaml`. */
  document?: string | Record<string, unknown>;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Generate data from the schemas instead of serving the examples. */
  dynamic?: boolean;
  /** Makes dynamic data, random delays and random faults repeatable: `7` and `'7'` are one seed, as `--seed 7` is. */
  seed?: string | number;
  /** Answer from per-credential worlds that remember writes (the sandbox) instead of from the examples. */
  sandbox?: MockSandboxOptions;
  /** Forward every request to a real server and check the exchanges against the document. */
  proxy?: ProxyOptions;
  /** Bytes of request bodies held at once, being read or waiting for their answer (default: an eighth of V8's heap). */
  maxBodyBytesInFlight?: number;
  /** One line per answered request; never given credentials. */
  onRequest?: (line: string) => void;
  /** Problems of the mock itself, such as an answer that breaks the document. */
  onWarning?: (line: string) => void;
}

export interface MockSandboxOptions extends SandboxChoices {
  /** Keep the worlds in this folder, one file per world, or in the PostgreSQL database of this URL (`postgres://…`), shared by every process on it. */
  state?: string;
  webhooks?: SandboxChoices['webhooks'] & {
    /** Hosts deliveries may go to, in the syntax of Gitea's `[webhook] ALLOWED_HOST_LIST` (default `loopback`). */
    allowedHosts?: string;
    /** Longest a delivery may take, in milliseconds (default 5000, Gitea's `DELIVER_TIMEOUT`). */
    timeoutMs?: number;
    /** Each delivery once it is settled, a copy of its own; one that throws or rejects is told on the console. */
    onDelivery?: (delivery: DeliveryRecord) => unknown;
  };
}

/** An operation the mock serves, as the document names it. */
export interface ServedOperation {
  operationId: string;
  /** Upper case: `GET`, `PATCH` … */
  method: string;
  /** The path template below /api/v1, such as `/repos/{owner}/{repo}/hooks/{id}`. */
  path: string;
}

export interface MockServer {
  /** `http://host:port` */
  origin: string;
  /** `http://host:port/api/v1`, the base URL clients use. */
  baseUrl: string;
  operations: readonly ServedOperation[];
  /** With `proxy`: what the exchanges came to so far, for a report (`--report` writes it as JSON). */
  proxyReport?(): ProxyReport;
  close(): Promise<void>;
}

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const document = options.document ?? DEFAULT_DOCUMENT;
  const { ceiling, maxHeld } = connectionBounds(options.maxHeld);
  if (options.proxy && typeof document !== 'string') throw new TypeError('the proxy reads its document from a file');
  let origin = '';
  let docsUrl = '';
  const mock = await createAnsweringMock({ ...options, maxHeld }, () => docsUrl, FastResponse);
  const { table, conditions, journal, bodies } = mock;
  // The proxy (its own request path on node:http, its answer check) is loaded only when it runs.
  const proxy = options.proxy
    ? await (await import('./proxy/proxy.js')).createProxy(document as string, options.proxy, {
        table,
        conditions,
        journal,
        bodies,
        docsUrl: () => docsUrl,
      })
    : undefined;

  const { port, host, onRequest, onWarning: warn = () => {} } = options;
  const handler = proxy ? proxy.handle : fetchHandler(mock.app, () => origin);
  const listening = await listen(handler, {
    port,
    host,
    ceiling,
    slowRequests: !!proxy,
    docsUrl: () => docsUrl,
    warn,
    onRequest,
  });
  origin = listening.origin;
  docsUrl = `${origin}/api/swagger`;
  return {
    origin,
    baseUrl: `${origin}${BASE_PATH}`,
    operations: table.operations,
    ...(proxy ? { proxyReport: () => proxy.report() } : {}),
    close: async () => {
      await listening.close();
      await mock.close();
      await proxy?.close();
    },
  };
}
