// A loopback HTTP server that answers the Basic credentials it received, decoded here with Node's
// own base64 and a strict UTF-8 decoder, so the scenario can compare them with what it meant to
// send. It answers CORS preflights, as a page on another origin must ask before sending
// `Authorization`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { serveOnLoopback, type LoopbackServer } from '../../support/loopback.js';

/** `{ username, password }` from a Basic header, or why it is not one. */
function decodeBasic(header: string | undefined): { username: string; password: string } | { message: string } {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/.exec(header ?? '');
  if (!match?.[1]) return { message: `not a Basic credential: ${JSON.stringify(header)}` };
  const bytes = Buffer.from(match[1], 'base64');
  if (bytes.toString('base64') !== match[1]) return { message: 'malformed base64' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { message: `not UTF-8: ${bytes.toString('hex')}` };
  }
  const colon = text.indexOf(':');
  return colon < 0
    ? { message: 'no colon between user name and password' }
    : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, body?: unknown): void {
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'Access-Control-Allow-Origin': req.headers.origin ?? '*',
    'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] ?? '',
    'Access-Control-Allow-Methods': 'GET',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export function startCredentialEcho(): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') return answer(req, res, 204);
    const decoded = decodeBasic(req.headers.authorization);
    answer(req, res, 'message' in decoded ? 401 : 200, decoded);
  });
  return serveOnLoopback(server, () => server.closeAllConnections());
}
