// A tiny HTTP server on 127.0.0.1 for the pages the browser tests open.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StaticFile {
  type: string;
  body: string | Buffer;
}

export interface StaticServer {
  /** `http://127.0.0.1:port` */
  origin: string;
  close(): Promise<void>;
}

/** Serves `files` by path (`/` included); anything else is a 404. */
export async function serveFiles(files: Record<string, StaticFile>): Promise<StaticServer> {
  const server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://127.0.0.1').pathname];
    if (req.method !== 'GET' || file === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-store' }).end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
