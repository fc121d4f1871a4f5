// Sends deliveries from Node as Gitea's webhook client does (services/webhook/deliver.go): only to
// allowed hosts (each address checked as the connection is made, so a name cannot point elsewhere
// after the check), within the delivery timeout for the whole exchange, reading at most 1 MiB of the
// answer, each header as the bytes Go writes (refused where Go refuses it). It follows no redirect:
// a 3xx is the answer, and a failed delivery.
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { setMaxListeners } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { networkFailure } from '../common/network-failure.js';
import { hostMatcher } from './allowed-hosts.js';
import type { DeliveryTransport, Sent } from './deliveries.js';

/** Bytes of an answer read, as Gitea keeps them. */
const ANSWER_LIMIT = 1024 * 1024;

export interface NodeTransportOptions {
  /** Gitea's `ALLOWED_HOST_LIST` syntax (default `loopback`). */
  allowedHosts?: string;
  /** The whole exchange's bound in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** Go's httpguts.ValidHeaderFieldValue: no control character but a tab. */
const INVALID_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * The headers as Go's client writes them: each value's UTF-8 bytes as they are (Node writes a
 * header's string as Latin-1, one byte a code unit, so each byte becomes one), without the spaces
 * and tabs around it (textproto.TrimString). The name of the first header Go's transport refuses
 * (`roundTrip`: a value with a line break or another control character), if one is.
 */
function wireHeaders(headers: Record<string, string>): Record<string, string> | string {
  const wire: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (INVALID_IN_HEADER.test(value)) return name;
    wire[name] = Buffer.from(value.replace(/^[ \t]+|[ \t]+$/g, ''), 'utf8').toString('latin1');
  }
  return wire;
}

export function createNodeTransport(options: NodeTransportOptions = {}): DeliveryTransport {
  const allowed = hostMatcher(options.allowedHosts ?? 'loopback');
  const timeoutMs = options.timeoutMs ?? 5000;
  const refusal = (host: string): string =>
    `not sent: ${host} is not an allowed host (allowed: ${allowed.list}; --webhook-allowed-hosts names others)`;
  const unresolved = (host: string, code: string): string =>
    `not sent: ${host} did not resolve (${code})${allowed.name(host) ? '' : `; once it does, it must resolve to addresses --webhook-allowed-hosts allows (allowed: ${allowed.list})`}`;

  /** Resolves as Node does, then refuses an address that is not allowed, saying so to `refused`. */
  const lookupFor =
    (refused: (why: string) => void): LookupFunction =>
    (hostname, lookupOptions, callback) => {
      dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        const denied = addresses.find((each) => !allowed.address(each.address));
        if (denied && !allowed.name(hostname)) {
          const why = refusal(`${hostname} (${denied.address})`);
          refused(why);
          return callback(new Error(why), '', 0);
        }
        if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      });
    };

  return {
    sign: (secret, payload) => ({
      sha256: createHmac('sha256', secret).update(payload).digest('hex'),
      sha1: createHmac('sha1', secret).update(payload).digest('hex'),
    }),
    send(outgoing, stopped) {
      let url: URL;
      try {
        url = new URL(outgoing.url);
      } catch {
        return Promise.resolve({ error: "not sent: the hook's URL is no URL" });
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return Promise.resolve({ error: `not sent: ${url.protocol} is not http or https` });
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      // A literal address is never looked up: it is checked here.
      if (/^[\d.]+$|:/.test(host) && !allowed.name(host)) return Promise.resolve({ error: refusal(host) });
      const headers = wireHeaders(outgoing.headers);
      if (typeof headers === 'string')
        return Promise.resolve({
          error: `the request failed: invalid header field value for "${headers}" (a line break or control character, which Go's client refuses to send)`,
        });
      // A timer of its own, not AbortSignal.timeout in AbortSignal.any: the GC may take that before it fires (nodejs/node#57736).
      const control = new AbortController();
      const { signal } = control;
      const timer = setTimeout(() => control.abort(), timeoutMs);
      const stop = (): void => control.abort();
      // One listener a delivery under way on the sender's one signal (the sender bounds them), each removed as it ends.
      setMaxListeners(0, stopped);
      if (stopped.aborted) stop();
      else stopped.addEventListener('abort', stop, { once: true });
      // Bytes, not a string: Node writes the headers with a string body in the body's encoding, not as Latin-1.
      const body = Buffer.from(outgoing.body, 'utf8');
      return new Promise<Sent>((resolve) => {
        /** Why the host was refused once its name was looked up, if it was. */
        let refused: string | undefined;
        const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
        const request = send(url, {
          method: outgoing.method,
          headers: { ...headers, 'Content-Length': String(body.length) },
          lookup: lookupFor((why) => {
            refused = why;
          }),
          signal,
          agent: false,
        });
        /** Why the exchange failed, in one line. */
        const cause = (error: unknown): string => {
          if (stopped.aborted) return 'not finished: the sandbox stopped';
          if (signal.aborted) return `no answer within the delivery timeout of ${timeoutMs / 1000} s`;
          if (refused !== undefined) return refused;
          const { code } = networkFailure(error as NodeJS.ErrnoException);
          if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return unresolved(host, code);
          return `the request failed: ${code ?? (error as Error).message}`;
        };
        const fail = (error: unknown): void => resolve({ error: cause(error) });
        request.on('error', fail);
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
        .catch((failure: unknown) => {
          // What Node refuses before any exchange (a header, an option) is a failed delivery too.
          const { code } = networkFailure(failure as NodeJS.ErrnoException);
          return { error: `the request failed: ${code ?? (failure as Error).message}` };
        })
        .finally(() => {
          clearTimeout(timer);
          stopped.removeEventListener('abort', stop);
        });
    },
  };
}
