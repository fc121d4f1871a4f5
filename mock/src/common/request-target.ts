// A target in origin form only (RFC 9112 §3.2.1) for a server passing requests to one origin: else an open relay.
/** Why `target` is not in origin form; `example` is a path the server serves, `forwardsTo` the host it passes requests to. */
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
