// A loopback HTTP server that misbehaves on cue: each request takes the next scripted handler
// (reset the connection, stall, answer 429 or 503, send broken JSON, …); with none left it
// answers 200 `[]`. Tests read back what arrived.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface FaultServer {
  /** `http://127.0.0.1:PORT/api/v1` */
  baseUrl: string;
  received: Received[];
  /** Queues handlers for the next requests, in order. */
  script(...handlers: Handler[]): void;
  /** Forgets what arrived and the handlers no request took, so a failed test leaves nothing to the next. */
  clear(): void;
  close(): Promise<void>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json;charset=utf-8',
      'content-length': Buffer.byteLength(payload),
      ...headers,
    });
    res.end(payload);
  };
}

export function raw(status: number, payload: string, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-length': Buffer.byteLength(payload), ...headers });
    res.end(payload);
  };
}

export const reset: Handler = (req) => req.socket.destroy();
/** Never answers; the server closes such sockets when it stops. */
export const stall: Handler = () => {};

export async function startFaultServer(): Promise<FaultServer> {
  const queue: Handler[] = [];
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      (queue.shift() ?? json(200, []))(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    received,
    script: (...handlers) => queue.push(...handlers),
    clear: () => {
      received.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One fault server per test file, cleared after each test; read `.current` inside tests. */
export function useFaultServer(): { current: FaultServer } {
  const holder = {} as { current: FaultServer };
  beforeAll(async () => {
    holder.current = await startFaultServer();
  });
  afterEach(() => holder.current.clear());
  afterAll(async () => {
    await holder.current.close();
  });
  return holder;
}
