// A server that passes requests on to one origin (the proxy to its upstream, the webhook
// receiver to its --forward app) takes a request target in origin form only, a path such as
// `/hook?x=1` (RFC 9112, section 3.2.1). An absolute URL (`POST http://elsewhere/… HTTP/1.1`) is
// meant for a forward proxy, and resolving one, or `//elsewhere/…`, against the origin would pass
// the request on to another host and hand its answer back: an open relay.

/**
 * Why `target` is not in origin form, or undefined when it is; `example` is a path the server
 * serves, `forwardsTo` the one host it passes requests on to, if it does.
 */
export function originFormRefusal(
  target: string | undefined,
  example: string,
  forwardsTo?: { server: string; host: string },
): string | undefined {
  if (target?.startsWith('/')) return undefined;
  const shown = JSON.stringify(String(target).slice(0, 100));
  const only = forwardsTo ? `: this ${forwardsTo.server} forwards to ${forwardsTo.host} only` : '';
  return `the request target must be a path such as ${example}, not ${shown}${only}`;
}

/** `target`'s path (an origin-form target) below `base`'s path, with `target`'s query, on `base`'s origin only. */
export function joinedTarget(base: URL, target: string): URL {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  const joined = new URL(base.href);
  // Set as parts, never resolved as a reference: a path such as `//elsewhere/x` stays a path.
  joined.pathname = `${base.pathname.replace(/\/$/, '')}${path}`;
  joined.search = query === -1 ? '' : target.slice(query);
  joined.hash = '';
  return joined;
}
