// A webhook receiver on 127.0.0.1 for the delivery suites: it keeps every request it gets as it
// came (method, path, headers, body) and answers as it is told: 200, 500, or never (it holds the
// request open until it is closed).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { serveOnLoopback } from '../../test/support/loopback.js';
import { verifyWebhookSignature } from '../../src/index.js';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answering = 'ok' | 'fail' | 'hang';

export interface HookReceiver {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  received: Received[];
  /** Resolves once a request with each of these delivery ids has arrived (at most `ms`), with them in that order. */
  waitFor(ids: readonly string[], ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startHookReceiver(answering: Answering = 'ok'): Promise<HookReceiver> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const wake of waiters) wake();
      if (answering === 'hang') held.push(res);
      else res.writeHead(answering === 'ok' ? 200 : 500).end(answering === 'ok' ? 'thanks' : 'broken');
    });
  });
  const loopback = await serveOnLoopback(server, () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
  });
  return {
    origin: `http://127.0.0.1:${loopback.port}`,
    received,
    waitFor(ids, ms = 20_000) {
      const pick = (): Received[] | undefined => {
        const found = ids.map((id) => received.find((each) => each.headers['x-gitea-delivery'] === id));
        return found.every(Boolean) ? (found as Received[]) : undefined;
      };
      return new Promise((resolve, reject) => {
        const done = pick();
        if (done) return resolve(done);
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`deliveries ${ids.join(', ')} did not all arrive within ${ms} ms (got ${received.length})`));
        }, ms);
        const wake = (): void => {
          const found = pick();
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(found);
        };
        waiters.add(wake);
      });
    },
    close: () => loopback.close(),
  };
}

/** The JSON payload of a delivery: the body, or its form field `payload`. */
export function payloadText(delivery: Pick<Received, 'headers' | 'body'>): string {
  return String(delivery.headers['content-type']).startsWith('application/x-www-form-urlencoded')
    ? (new URLSearchParams(delivery.body).get('payload') ?? '')
    : delivery.body;
}

/** Checks each signature of a delivery against `secret` with node:crypto, and with the client's verifyWebhookSignature. */
export async function expectSignedBy(delivery: Pick<Received, 'headers' | 'body'>, secret: string): Promise<void> {
  const payload = payloadText(delivery);
  const sha256 = createHmac('sha256', secret).update(payload).digest('hex');
  const sha1 = createHmac('sha1', secret).update(payload).digest('hex');
  expect(sha256).toMatch(/^[0-9a-f]{64}$/);
  expect({
    gitea: delivery.headers['x-gitea-signature'],
    gogs: delivery.headers['x-gogs-signature'],
    hub256: delivery.headers['x-hub-signature-256'],
    hub: delivery.headers['x-hub-signature'],
  }).toEqual({ gitea: sha256, gogs: sha256, hub256: `sha256=${sha256}`, hub: `sha1=${sha1}` });
  expect(await verifyWebhookSignature(secret, payload, String(delivery.headers['x-gitea-signature']))).toBe(true);
  expect(await verifyWebhookSignature(secret, payload, String(delivery.headers['x-hub-signature-256']))).toBe(true);
}
