// Reads a request body with a hard size limit and turns it into what Prism validates, refusing
// what Gitea's binding refuses (empty or unsupported content types, malformed JSON, bad UTF-8).
import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export type BodyResult =
  | { ok: true; body: unknown }
  | { ok: false; status: 413 | 422 | 400; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function readRaw(req: IncomingMessage): Promise<{ ok: true; data: Buffer } | { ok: false; status: 413 | 400; message: string }> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) {
    return Promise.resolve({ ok: false, status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: Awaited<ReturnType<typeof readRaw>>): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        chunks.length = 0; // drop what was read; the rest is discarded as it arrives
        finish({ ok: false, status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` });
        req.resume();
        return;
      }
      if (!settled) chunks.push(chunk);
    });
    req.on('end', () => finish({ ok: true, data: Buffer.concat(chunks) }));
    req.on('error', () => finish({ ok: false, status: 400, message: 'the request body could not be read' }));
    req.on('aborted', () => finish({ ok: false, status: 400, message: 'the request body was cut short' }));
  });
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

/**
 * `undefined` when the request has no body. Gitea answers a POST or PUT body without a
 * `Content-Type` with `422 "[]: Empty Content-Type"` and malformed JSON with `422 "[]: …"`.
 */
export async function readBody(req: IncomingMessage): Promise<BodyResult> {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) {
    req.resume();
    return { ok: true, body: undefined };
  }
  const raw = await readRaw(req);
  if (!raw.ok) return raw;
  if (raw.data.length === 0) return { ok: true, body: undefined };

  const contentType = req.headers['content-type'];
  if (contentType === undefined || contentType.trim() === '') {
    return { ok: false, status: 422, message: '[]: Empty Content-Type' };
  }
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (isJson(mediaType)) {
    let text: string;
    try {
      text = utf8.decode(raw.data);
    } catch {
      return { ok: false, status: 422, message: '[]: the request body is not valid UTF-8' };
    }
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch (error) {
      return { ok: false, status: 422, message: `[]: ${error instanceof Error ? error.message : 'malformed JSON'}` };
    }
  }
  // Multipart and other bodies go to Prism as text, which it parses and validates; file parts
  // may hold any bytes, so no strict decoding here.
  return { ok: true, body: raw.data.toString('latin1') };
}
