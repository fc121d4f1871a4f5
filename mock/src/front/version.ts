// GET /api/v1/version, which Gitea and Forgejo answer without credentials: {"version": "…"}.
// Clients, and live mode before anything else, ask it to learn that a Gitea API is there. It is
// not one of the document's operations but a fact of the host: the front answers it the same for
// every answering source (the examples and the sandbox stand for one and the same host), and a
// pass-through source takes the request whole before the front routes anything, so the proxy
// hands it to the upstream, whose version is the one that counts there.
import type { Answer } from './answer-source.js';

/** The path below /api/v1. */
export const VERSION_PATH = '/version';

/** The Gitea release the document describes (`info.version` of openapi.yaml), marked as this mock. */
export const MOCK_VERSION = '1.27.0+gitea-contract-mock';

export const VERSION_ANSWER: Answer = { status: 200, type: 'application/json', body: { version: MOCK_VERSION } };
