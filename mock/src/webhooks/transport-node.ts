// Sends deliveries from Node as Gitea's webhook client does (services/webhook/deliver.go), following no redirect.
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { setMaxListeners } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { networkFailure } from '../common/network-failure.js';
import { hostMatcher } from './allowed-hosts.js';
import type { DeliveryTransport, Sent, WebhookOptions } from './deliveries.js';

/** Bytes of an answer read, as Gitea keeps them. */
export const ANSWER_LIMIT = 1024 * 1024;
/** Go's httpguts.ValidHeaderFieldValue: no control character but a tab. */
const INVALID_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;

const NOT_ALLOWED = 'GITEA_MOCK_NOT_ALLOWED';
const failed = (error: unknown): string =>
  `the request failed: ${networkFailure(error).code ?? (error as Error).message}`;

/** Node's own HMAC, faster than the portable one. */
export const nodeSign = (secret: string, payload: string) => ({
  sha256: createHmac('sha256', secret).update(payload).digest('hex'),
  sha1: createHmac('sha1', secret).update(payload).digest('hex'),
});

// Gitea's default is `external`; the sandbox's receivers under test listen on 127.0.0.1.
export function createNodeTransport({
  allowedHosts = 'loopback',
  timeoutMs = 5000,
}: WebhookOptions): DeliveryTransport {
  // Each address is checked as the connection is made, so a name cannot point elsewhere after the check.
  const allowed = hostMatcher(allowedHosts);
  const refusal = (host: string): string =>
    `not sent: ${host} is not an allowed host (allowed: ${allowed.list}; --webhook-allowed-hosts names others)`;

  /** Resolves as Node does, then refuses an address that is not allowed: the request fails with that error. */
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const denied = addresses.find((each) => !allowed.address(each.address));
      const why = denied && !allowed.name(hostname) && refusal(`${hostname} (${denied.address})`);
      if (why) return callback(Object.assign(new Error(why), { code: NOT_ALLOWED }), '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  return {
    sign: nodeSign,
    async send(outgoing, stopped) {
      if (!URL.canParse(outgoing.url)) return { error: "not sent: the hook's URL is no URL" };
      const url = new URL(outgoing.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { error: `not sent: ${url.protocol} is not http or https` };
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      // A literal address is never looked up: it is checked here.
      if (/^[\d.]+$|:/.test(host) && !allowed.name(host)) return { error: refusal(host) };
      // Go's client writes each value's UTF-8 bytes as they are (Node writes a string as Latin-1), trimmed of spaces
      // and tabs (textproto.TrimString); its transport refuses a value with a control character (`roundTrip`).
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(outgoing.headers)) {
        if (INVALID_IN_HEADER.test(value))
          return {
            error: `the request failed: invalid header field value for "${name}" (a line break or control character, which Go's client refuses to send)`,
          };
        headers[name] = Buffer.from(value.replace(/^[ \t]+|[ \t]+$/g, ''), 'utf8').toString('latin1');
      }
      // A timer of its own, not AbortSignal.timeout in AbortSignal.any: the GC may take that before it fires (nodejs/node#57736).
      const control = new AbortController();
      const stop = (): void => control.abort();
      const timer = setTimeout(stop, timeoutMs);
      // One listener a delivery under way on the sender's one signal (the sender bounds them), each removed as it ends.
      setMaxListeners(0, stopped);
      if (stopped.aborted) stop();
      else stopped.addEventListener('abort', stop, { once: true });
      // Bytes, not a string: Node writes the headers with a string body in the body's encoding, not as Latin-1.
      const body = Buffer.from(outgoing.body, 'utf8');
      return (
        new Promise<Sent>((resolve) => {
          const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
            method: outgoing.method,
            headers: { ...headers, 'Content-Length': String(body.length) },
            lookup,
            signal: control.signal,
            agent: false,
          });
          request.on('error', (error: unknown) => {
            const { code, message } = networkFailure(error);
            resolve({
              error: stopped.aborted
                ? 'not finished: the sandbox stopped'
                : control.signal.aborted
                  ? `no answer within the delivery timeout of ${timeoutMs / 1000} s`
                  : code === NOT_ALLOWED
                    ? message
                    : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
                      ? `not sent: ${host} did not resolve (${code})${allowed.name(host) ? '' : `; once it does, it must resolve to addresses --webhook-allowed-hosts allows (allowed: ${allowed.list})`}`
                      : failed(error),
            });
          });
          request.on('response', (answer: IncomingMessage) => {
            let read = 0;
            answer.on('data', (chunk: Buffer) => {
              read += chunk.length;
              // The rest is not wanted: the status is the result.
              if (read > ANSWER_LIMIT) answer.destroy();
            });
            answer.on('error', () => resolve({ status: answer.statusCode ?? 0 }));
            answer.on('close', () => resolve({ status: answer.statusCode ?? 0 }));
          });
          request.end(body);
        })
          // What Node refuses before any exchange (an option) is a failed delivery too.
          .catch((failure: unknown) => ({ error: failed(failure) }))
          .finally(() => {
            clearTimeout(timer);
            stopped.removeEventListener('abort', stop);
          })
      );
    },
  };
}
