// Sends deliveries from Node as Gitea's webhook client does (services/webhook/deliver.go): Go's http.Client, which
// follows redirects.
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { setMaxListeners } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { networkFailure } from '../common/network-failure.js';
import { hostMatcher } from './allowed-hosts.js';
import type { DeliveryTransport, WebhookOptions } from './deliveries.js';

/** Bytes of an answer read, as Gitea keeps them. */
export const ANSWER_LIMIT = 1024 * 1024;
/** Go's httpguts.ValidHeaderFieldValue: no control character but a tab. */
const INVALID_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;

const NOT_ALLOWED = 'GITEA_MOCK_NOT_ALLOWED';
/** The statuses Go's client follows (`redirectBehavior`), and how many times (`defaultCheckRedirect`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;
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
    `${host} is not an allowed host (allowed: ${allowed.list}; --webhook-allowed-hosts names others)`;

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

  /** The address a hop goes to, checked as the first is: an http or https URL, a literal address allowed. */
  const unfit = (url: URL): string | undefined => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} is not http or https`;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // A literal address is never looked up: it is checked here.
    return /^[\d.]+$|:/.test(host) && !allowed.name(host) ? refusal(host) : undefined;
  };

  /** One request and the status of its answer, with where a redirect points. */
  const exchange = (
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal: AbortSignal,
  ) =>
    new Promise<{ status: number; location?: string } | { failure: unknown }>((resolve) => {
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method,
        headers: body ? { ...headers, 'Content-Length': String(body.length) } : headers,
        lookup,
        signal,
        agent: false,
      });
      request.on('error', (failure: unknown) => resolve({ failure }));
      request.on('response', (answer: IncomingMessage) => {
        const status = answer.statusCode ?? 0;
        const location = REDIRECTS.has(status) ? answer.headers.location : undefined;
        // A redirect's body is not wanted: the next hop is.
        if (location !== undefined) {
          answer.destroy();
          return resolve({ status, location });
        }
        let read = 0;
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The rest is not wanted: the status is the result.
          if (read > ANSWER_LIMIT) answer.destroy();
        });
        answer.on('error', () => resolve({ status }));
        answer.on('close', () => resolve({ status }));
      });
      request.end(body);
    });

  return {
    sign: nodeSign,
    async send(outgoing, stopped) {
      if (!URL.canParse(outgoing.url)) return { error: "not sent: the hook's URL is no URL" };
      let url = new URL(outgoing.url);
      let hops = 0;
      /** What a refusal before a hop's exchange begins with: the redirects that led to it. */
      const notSent = () =>
        hops === 0
          ? 'not sent: '
          : `not sent on after ${hops} redirect${hops === 1 ? '' : 's'}, to ${url.protocol}//${url.host}: `;
      const first = unfit(url);
      if (first) return { error: `${notSent()}${first}` };
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
      // Go's Client.Timeout bounds the whole delivery, its redirects too.
      const control = new AbortController();
      const stop = (): void => control.abort();
      const timer = setTimeout(stop, timeoutMs);
      // One listener a delivery under way on the sender's one signal (the sender bounds them), each removed as it ends.
      setMaxListeners(0, stopped);
      if (stopped.aborted) stop();
      else stopped.addEventListener('abort', stop, { once: true });
      const why = (failure: unknown): string => {
        const { code, message } = networkFailure(failure);
        const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
        if (stopped.aborted) return 'not finished: the sandbox stopped';
        if (control.signal.aborted) return `no answer within the delivery timeout of ${timeoutMs / 1000} s`;
        if (code === NOT_ALLOWED) return `${notSent()}${message}`;
        if (code !== 'ENOTFOUND' && code !== 'EAI_AGAIN') return failed(failure);
        const allowedHint = `; once it does, it must resolve to addresses --webhook-allowed-hosts allows (allowed: ${allowed.list})`;
        return `${notSent()}${host} did not resolve (${code})${allowed.name(host) ? '' : allowedHint}`;
      };
      // Bytes, not a string: Node writes the headers with a string body in the body's encoding, not as Latin-1.
      let body: Buffer | undefined = Buffer.from(outgoing.body, 'utf8');
      let method: string = outgoing.method;
      const initialHost = url.hostname;
      try {
        // Go's http.Client follows up to 10 redirects (client.go `Do`), each hop dialled through the allow-list.
        for (;;) {
          const answer = await exchange(url, method, headers, body, control.signal);
          if ('failure' in answer) return { error: why(answer.failure) };
          if (answer.location === undefined) return { status: answer.status };
          if (hops === MAX_REDIRECTS) return { error: `the request failed: stopped after ${MAX_REDIRECTS} redirects` };
          if (!URL.canParse(answer.location, url))
            return { error: `the request failed: failed to parse Location header ${JSON.stringify(answer.location)}` };
          const next = new URL(answer.location, url);
          // 301, 302 and 303 go on as a GET without a body; 307 and 308 send the request again.
          if (answer.status < 307) [method, body] = ['GET', undefined];
          // Authorization goes to the first host and its subdomains only, and once dropped it stays dropped.
          if (!sameOrSubdomain(next.hostname, initialHost)) delete headers.Authorization;
          if (url.protocol === 'https:' && next.protocol === 'http:') delete headers.Referer;
          else headers.Referer = refererOf(url);
          url = next;
          hops++;
          const wrong = unfit(url);
          if (wrong) return { error: `${notSent()}${wrong}` };
        }
      } catch (failure) {
        // What Node refuses before any exchange (an option) is a failed delivery too.
        return { error: failed(failure) };
      } finally {
        clearTimeout(timer);
        stopped.removeEventListener('abort', stop);
      }
    },
  };
}

/** Whether `host` is `initial` or one of its subdomains (Go's `isDomainOrSubdomain`). */
const sameOrSubdomain = (host: string, initial: string): boolean =>
  host === initial || (!/^\[|^[\d.]+$/.test(host) && host.endsWith(`.${initial}`));

/** The Referer Go sends a redirect with: the previous URL without its credentials or fragment. */
function refererOf(url: URL): string {
  const referer = new URL(url);
  referer.username = referer.password = referer.hash = '';
  return referer.href;
}
