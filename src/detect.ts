// detectServer: which server a client talks to (Gitea or Forgejo), its version, and the contract's
// profile for it. `GET /api/forgejo/v1/version` exists on Forgejo alone (routers/api/forgejo/v1);
// `GET /api/v1/version` answers on both: `1.27.1` on Gitea, `11.0.3+gitea-1.22.0` on Forgejo, whose
// `+gitea-` part has named the same Gitea release since Forgejo 7 and says nothing about its API.
import { SERVER_PROFILES, type ServerProfile } from '../generated/profiles.js';
import { baseUrlOf, errorOf, scrubFor, type AnyClient, type Result } from './client.js';
import { ApiError } from './errors.js';

export interface DetectedServer {
  family: 'gitea' | 'forgejo';
  /** The version as the server gave it, such as `1.27.1` or `11.0.3+gitea-1.22.0`. */
  version: string;
  /** The profile whose contract that server follows (`server` of the client's options). */
  profile: ServerProfile;
  /** Set when no profile is that exact release: which profile stands in for it, and why. */
  warning?: string;
}

type Get = (path: string, init?: { baseUrl?: string }) => Promise<Result>;

/** The `version` of a 2xx answer of a version endpoint, else undefined. */
function versionOf(result: Result): string | undefined {
  const version = (result.data as { version?: unknown } | undefined)?.version;
  return result.response.ok && typeof version === 'string' && version !== '' ? version : undefined;
}

/** The profiles of a family, oldest first, each with its release as numbers (`[1, 27]`, `[11]`). */
function profilesOf(family: DetectedServer['family']): { profile: ServerProfile; release: number[] }[] {
  return SERVER_PROFILES.filter((p) => p.startsWith(`${family}-`)).map((profile) => ({
    profile,
    release: profile
      .slice(family.length + 1)
      .split('.')
      .map(Number),
  }));
}

/** Negative, zero or positive as release `a` is older than, the same as or newer than `b`, over `b`'s parts. */
function compare(a: number[], b: number[]): number {
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** The profile for a family's version: its own, else the newest older one, else the family's oldest. */
export function profileFor(
  family: DetectedServer['family'],
  version: string,
): Omit<DetectedServer, 'family' | 'version'> {
  const name = family === 'gitea' ? 'Gitea' : 'Forgejo';
  const known = profilesOf(family);
  const newest = known.at(-1)!;
  // Gitea's releases are 1.minor, Forgejo's are majors (11.0.3); a build of main may answer a commit hash.
  const match = (family === 'gitea' ? /^v?(\d+)\.(\d+)/ : /^v?(\d+)\./).exec(version);
  if (!match)
    return {
      profile: newest.profile,
      warning: `${name} ${version} names no release: ${newest.profile}, the newest profile, stands in for it`,
    };
  const release = match.slice(1).map(Number);
  const exact = known.find((k) => compare(release, k.release) === 0);
  if (exact) return { profile: exact.profile };
  const older = known.filter((k) => compare(release, k.release) > 0).at(-1);
  if (!older)
    return {
      profile: known[0]!.profile,
      warning: `${name} ${version} is older than every profile: ${known[0]!.profile}, the oldest, stands in for it`,
    };
  return {
    profile: older.profile,
    warning:
      older === newest
        ? `${name} ${version} is newer than every profile: ${older.profile}, the newest, stands in for it`
        : `${name} ${version} has no profile: ${older.profile}, the newest older one, stands in for it`,
  };
}

/**
 * Asks the server behind `client` which it is. Rejects with the client's `ApiError` when
 * `/api/v1/version` does not answer a version (a base URL that is not a Gitea API, a server that
 * wants credentials for it).
 */
export async function detectServer(client: AnyClient): Promise<DetectedServer> {
  const get = client.GET as unknown as Get;
  const baseUrl = baseUrlOf(client) ?? '';
  // Forgejo's own API sits beside /api/v1; a base URL of another shape has no such sibling to ask.
  const forgejoBase = /\/api\/v1\/?$/.test(baseUrl) ? baseUrl.replace(/\/api\/v1\/?$/, '/api/forgejo/v1') : undefined;
  const [answer, forgejo] = await Promise.all([
    get('/version'),
    // Gitea answers it 404, which a client made with `throwOnError` throws: absent, either way.
    forgejoBase ? get('/version', { baseUrl: forgejoBase }).catch(() => undefined) : undefined,
  ]);
  const reported = versionOf(answer);
  if (!reported)
    throw (
      errorOf(answer.response) ??
      scrubFor(client, new ApiError('GET', '/version', answer.response, answer.data, 'the answer names no version'))
    );
  const forgejoVersion = forgejo && versionOf(forgejo);
  const family = forgejoVersion || /\+gitea-\d/.test(reported) ? 'forgejo' : 'gitea';
  const version = forgejoVersion ?? reported;
  return { family, version, ...profileFor(family, version) };
}
