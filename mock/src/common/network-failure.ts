// What went wrong below HTTP, dug out of an error's code, its `cause` chain (fetch) or `errors` (AggregateError).
type Layer = Error & { code?: unknown; reason?: unknown; errors?: unknown };

/** Certificate and handshake failures, whichever layer names them. */
const TLS_CODE = /CERT|SIGNATURE|SSL|TLS|^EPROTO$/;

/** A certificate whose issuer Node does not trust (self-signed, a private CA's, as many in-house servers have). */
const UNTRUSTED =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/;

/** The innermost code (`ECONNREFUSED` …) and message; for a TLS failure OpenSSL's reason, and what to try where there is one thing. */
export function networkFailure(error: unknown) {
  let coded: Layer | undefined;
  let message = error instanceof Error ? error.message : String(error);
  // A few levels at most: a cause chain could be made to loop.
  for (let layer = error as Layer | undefined, depth = 0; layer instanceof Error && depth < 8; depth++) {
    message = layer.message;
    // A DOMException's numeric `code` is no error code.
    if (typeof layer.code === 'string') coded = layer;
    layer = (layer.cause ?? (Array.isArray(layer.errors) ? layer.errors[0] : undefined)) as Layer | undefined;
  }
  const code = coded?.code as string | undefined;
  if (!coded || !TLS_CODE.test(code!)) return { code, message };
  // OpenSSL's reason: on `reason`, in a handshake message, or a certificate error's message (ending in a colon).
  const reason =
    typeof coded.reason === 'string'
      ? coded.reason
      : (/SSL routines:[^:]*:([^:]+)/.exec(coded.message)?.[1] ?? coded.message);
  const tls = reason.replace(/[\s:]+$/, '');
  const advice = /wrong version number/.test(tls)
    ? 'does the server speak plain http?'
    : UNTRUSTED.test(code!)
      ? 'if you trust the server, set NODE_EXTRA_CA_CERTS to a PEM file of its CA certificate and start again'
      : undefined;
  return { code, tls, advice, message };
}

const MEANINGS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused: is the server running, on that port?',
  ECONNRESET: 'the connection was reset before an answer',
  EPIPE: 'the connection was closed while sending',
  UND_ERR_SOCKET: 'the connection was closed before an answer',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
};

/** `ECONNREFUSED (the connection was refused: …)`, `TLS failed: CODE (reason)`, else the innermost message. */
export function failureCause(error: unknown, url?: URL): string {
  const { code, tls, advice, message } = networkFailure(error);
  // Fetch refuses, without a code, the ports the Fetch standard blocks (9, 25, 6000 …).
  if (message === 'bad port' && url)
    return `fetch refuses port ${url.port}, which the Fetch standard blocks: use another port`;
  if (tls) return `TLS failed: ${code} (${tls}${advice ? `: ${advice}` : ''})`;
  if (code) return `${code} (${MEANINGS[code] ?? message})`;
  return message;
}
