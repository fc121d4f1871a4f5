// Bounds on connections, so that sockets which send nothing cannot lock other clients out (the front's and the webhook receiver's).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a connection may stay open without sending a request, before its first and between two. */
export const IDLE_TIMEOUT_MS = 5_000;

/** 4,096, or fewer where the process may open fewer files (128 kept): past that, Node drops new connections before idle ones close. */
export function defaultMaxConnections(): number {
  let files = Infinity;
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft !== undefined && soft !== 'unlimited') files = Number(soft);
  } catch {
    // Not Linux: no limit known.
  }
  return Math.max(16, Math.min(4_096, files - 128));
}

/** Sends a last answer on a socket outside Node's HTTP handling and closes it, even if the peer never closes its side. */
export function answerAndClose(socket: Duplex, answer: string): void {
  socket.on('error', () => {});
  if (socket.writable) socket.end(answer);
  // A half-closed socket waits a second at most for its peer to close.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** At most `ceiling` connections: a new one past it closes the one idle longest, or gets `refusal` when every one is busy. */
export function limitConnections(server: Server, ceiling: number, refusal: () => string) {
  // Sockets with no request in progress, the longest idle first (a Map keeps insertion order).
  const idle = new Map<Socket, true>();
  const inProgress = new Map<Socket, number>();
  const refused = new WeakSet<Socket>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => {
      open--;
      idle.delete(socket);
      inProgress.delete(socket);
    });
    if (open > ceiling) {
      const longest = idle.keys().next();
      if (longest.done) {
        refused.add(socket);
        return answerAndClose(socket, refusal());
      }
      idle.delete(longest.value);
      longest.value.destroy();
    }
    idle.set(socket, true);
  });
  const begin = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    if (refused.has(socket)) return;
    idle.delete(socket);
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inProgress.get(socket) ?? 1) - 1;
      if (left > 0) inProgress.set(socket, left);
      else {
        inProgress.delete(socket);
        // Last in the order: idle from now.
        if (!socket.destroyed) idle.set(socket, true);
      }
    });
  };
  server.on('request', begin);
  server.on('checkExpectation', begin);
  return { refused: (socket: Socket) => refused.has(socket) };
}
