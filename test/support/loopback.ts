// Servers the tests start listen on 127.0.0.1 only, on a port the system picks.
import type { AddressInfo, Server } from 'node:net';

export interface LoopbackServer {
  /** The port the system picked. */
  port: number;
  /** The API root on it, `http://127.0.0.1:PORT/api/v1`. */
  baseUrl: string;
  /** Stops listening and drops the connections still open. */
  close(): Promise<void>;
}

/** Starts `server` on 127.0.0.1 and a free port; `drop` ends its open connections at close. */
export async function serveOnLoopback(server: Server, drop: () => void): Promise<LoopbackServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        drop();
      }),
  };
}
