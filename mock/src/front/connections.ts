// Bounds on connections, so that sockets which send nothing cannot lock other clients out. Node
// closes a socket that has not sent a whole request head within the idle bound (headersTimeout,
// checked every second) and a kept-alive one idle for as long (keepAliveTimeout); on top of that,
// at most `ceiling` connections are open: a new one past it closes the connection that has been
// idle longest (no request in progress: it sent nothing yet, or waits between requests), and
// when every connection is busy with a request it is answered 503 and closed.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a connection may stay open without sending a request, before its first and between two. */
export const IDLE_TIMEOUT_MS = 5_000;
/** How long a socket answered and half-closed by the front waits for its peer to close, at most. */
const LINGER_MS = 1_000;
/** Far above what a test suite or a browser opens at once, and memory stays low (a few KiB each). */
const MAX_CEILING = 4_096;
/** Descriptors kept for everything else: Node's own, the state file, the proxy's upstream connections (64 by default). */
const RESERVED_FILES = 128;

/** The process's limit on open files (Linux), or Infinity where it cannot be read. */
function openFileLimit(): number {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
  } catch {
    return Infinity;
  }
}

/**
 * 4,096, or fewer where the process may open fewer files: past that limit Node accepts and drops
 * every new connection at once, so the ceiling must come first for idle ones to be closed instead.
 */
export function defaultMaxConnections(): number {
  return Math.max(16, Math.min(MAX_CEILING, openFileLimit() - RESERVED_FILES));
}

/** Sends a last answer on a socket outside Node's HTTP handling and closes it, even if the peer never closes its side. */
export function answerAndClose(socket: Duplex, answer: string): void {
  socket.on('error', () => {});
  if (socket.writable) socket.end(answer);
  // HTTP sockets are half-open: without this, a peer that never closes would keep the descriptor.
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

export interface ConnectionLimit {
  /** Whether the socket was refused for the ceiling: it already has its answer, and gets no other. */
  refused(socket: Socket): boolean;
}

/** Keeps at most `ceiling` connections open on `server`; `refusal` is the answer to one that finds every connection busy. */
export function limitConnections(server: Server, ceiling: number, refusal: () => string): ConnectionLimit {
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
        answerAndClose(socket, refusal());
        return;
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
  return { refused: (socket) => refused.has(socket) };
}
