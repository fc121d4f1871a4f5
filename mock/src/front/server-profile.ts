// The server a profile's document names (`info.x-profile`, from profiles/<name>.yaml), as the mock answers for it:
// its version endpoints and its router's 404. Without a profile: the mock's own version and Gitea's JSON 404.
import { isForgejo, isObject, profileOf } from '../contract/document.js';
import type { Answer } from './app.js';

export const MOCK_VERSION = '1.27.0+gitea-contract-mock';
export const FORGEJO_VERSION_PATH = '/api/forgejo/v1/version';
// Forgejo's Makefile (`GITEA_COMPATIBILITY ?= gitea-1.22.0`), after a `+` in each version it answers since Forgejo 7.
const GITEA_COMPATIBILITY = 'gitea-1.22.0';

export interface ServerAnswers {
  /** The profile's name, where the document is one. */
  profile?: string;
  forgejo: boolean;
  version: Answer;
  forgejoVersion?: Answer;
  notFound?: Answer;
  /** JSON as json-iterator writes it (common/go-json.ts): HTML characters escaped, an answer ended by a newline. */
  jsonIterator: boolean;
}

/** The profile's Gitea minor (24 for `gitea-1.24`), or Infinity for the base and Forgejo. */
export function giteaMinor(profile: string | undefined): number {
  const minor = /^gitea-1\.(\d+)$/.exec(profile ?? '')?.[1];
  return minor === undefined ? Number.POSITIVE_INFINITY : Number(minor);
}

/** Gitea before 1.26 and Forgejo encode with json-iterator; Gitea 1.26 on with encoding/json/v2. */
export const encodesWithJsonIterator = (profile: string | undefined): boolean =>
  isForgejo(profile) || giteaMinor(profile) < 26;

export function serverAnswers(document: Record<string, unknown>): ServerAnswers {
  const info = isObject(document.info) ? document.info : {};
  const profile = profileOf(document);
  const json = (version: string): Answer => ({ status: 200, type: 'application/json', body: { version } });
  if (profile === undefined) return { version: json(MOCK_VERSION), forgejo: false, jsonIterator: false };
  const forgejo = isForgejo(profile);
  const version = forgejo ? `${info.version}+${GITEA_COMPATIBILITY}` : String(info.version);
  return {
    profile,
    forgejo,
    jsonIterator: encodesWithJsonIterator(profile),
    version: json(version),
    // routers/api/forgejo/v1/forgejo.go, GetVersion: json.NewEncoder without a Content-Type, which Go sniffs as text.
    ...(forgejo
      ? { forgejoVersion: { status: 200, type: 'text/plain', body: `${JSON.stringify({ version })}\n` } }
      : {}),
    // routers/init.go's NotFound, Go's http.NotFound, which the API's router has no handler of its own for.
    notFound: { status: 404, type: 'text/plain', body: '404 page not found\n' },
  };
}
