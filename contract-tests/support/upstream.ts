// Upstreams for the proxy's tests, on loopback: a Node HTTP server (it parses requests as a Go
// server would, so a smuggled request shows up as one), and a raw TCP server that writes answers
// byte for byte, as no HTTP library would, and keeps every byte it was sent.
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: HttpServer; origin: string }> {
  const server = createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function close(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface RawUpstream {
  origin: string;
  /** The bytes each connection sent, in order of connection. */
  received: Buffer[];
  /** Connections open now, and the most at once so far. */
  open(): number;
  peak(): number;
  close(): Promise<void>;
}

/**
 * A TCP server that calls `answer` with each connection's socket once the request's head (up to
 * the blank line) has arrived; what `answer` writes goes out as it is.
 */
export async function rawUpstream(answer: (socket: Socket, head: string, index: number) => void): Promise<RawUpstream> {
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const held = new Set<Socket>();
  let peak = 0;
  const server = createServer((socket) => {
    const index = received.length;
    received.push(Buffer.alloc(0));
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    // The peak counts connections as the proxy holds them: one is let go once its end (FIN or
    // reset) arrives, and a new one is counted a turn later, after any end that came in with it.
    // Under load, a connection the proxy closed before opening the next can otherwise close here after it.
    held.add(socket);
    setImmediate(() => {
      if (held.has(socket)) peak = Math.max(peak, held.size);
    });
    const letGo = (): boolean => held.delete(socket);
    socket.on('end', letGo);
    socket.on('close', letGo);
    socket.on('error', letGo);
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      received[index] = Buffer.concat([received[index]!, chunk]);
      const text = received[index]!.toString('latin1');
      if (!answered && text.includes('\r\n\r\n')) {
        answered = true;
        answer(socket, text.slice(0, text.indexOf('\r\n\r\n')), index);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    open: () => sockets.size,
    peak: () => peak,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
