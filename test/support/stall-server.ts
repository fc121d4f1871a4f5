// A loopback server that accepts every connection and never answers: only the client's own timer
// can end a call to it. Closing it drops the connections it holds.
import { createServer, type Socket } from 'node:net';
import { serveOnLoopback, type LoopbackServer } from './loopback.js';

export function startStallServer(): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that gives up resets the connection: expected here, not an error.
    socket.on('error', () => {});
    // Takes the request in, and says nothing.
    socket.resume();
  });
  return serveOnLoopback(server, () => {
    for (const socket of sockets) socket.destroy();
  });
}
