// What went wrong below HTTP, dug out of an error, for live mode's reachability line and the
// proxy's 502. Node's http and https put `code` on the error itself; fetch (undici) throws
// `TypeError: fetch failed` with the code on its `cause`, sometimes a level deeper, and a host
// name with several addresses fails as an AggregateError whose `errors` hold the codes.

export interface NetworkFailure {
  /** The innermost error code, such as `ECONNREFUSED` or `ERR_SSL_WRONG_VERSION_NUMBER`. */
  code: string | undefined;
  /** OpenSSL's reason, such as `wrong version number`, when TLS failed. */
  tls: string | undefined;
  /** What to try about that TLS failure, where there is one thing to try. */
  advice: string | undefined;
  /** The innermost message, for an error without a code. */
  message: string;
}

type Layer = Error & { code?: unknown; reason?: unknown; errors?: unknown };

/** Certificate and handshake failures, whichever layer names them. */
const TLS_CODE = /CERT|SIGNATURE|SSL|TLS|^EPROTO$/;

/**
 * A certificate whose issuer Node does not trust: self-signed, or signed by a private CA, as
 * many in-house Gitea servers are. Node adds the certificates of NODE_EXTRA_CA_CERTS to the ones
 * it trusts, for fetch and for https alike.
 */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

function adviceFor(code: string, tls: string): string | undefined {
  if (/wrong version number/.test(tls)) return 'does the server speak plain http?';
  if (UNTRUSTED.has(code))
    return 'if you trust the server, set NODE_EXTRA_CA_CERTS to a PEM file of its CA certificate and start again';
  return undefined;
}

export function networkFailure(error: unknown): NetworkFailure {
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
  if (!coded || !TLS_CODE.test(code!)) return { code, tls: undefined, advice: undefined, message };
  // OpenSSL's reason: on `reason`, inside a handshake message, or the whole message of a certificate
  // error. A host name check ends its reason with a colon and the names it found, when there are none.
  const reason =
    typeof coded.reason === 'string'
      ? coded.reason
      : (/SSL routines:[^:]*:([^:]+)/.exec(coded.message)?.[1] ?? coded.message);
  const tls = reason.replace(/[\s:]+$/, '');
  return { code, tls, advice: adviceFor(code!, tls), message };
}
