// Which server the proxy stands before, asked once at its start as gitea-contract's detectServer asks: its exchanges
// are checked against that server's profile.
import { createGiteaClient, detectServer, type ServerProfile } from 'gitea-contract';
import { BASE_PROFILE } from '../contract/document-file.js';
import { checkUpstream, type ProxyOptions } from './proxy.js';

export interface CheckedAs {
  profile: ServerProfile;
  /** What the upstream said it is, such as `Forgejo 11.0.3+gitea-1.22.0`. */
  server?: string;
  /** Why the profile is not that exact release, or why it is the base's. */
  warning?: string;
}

/** The upstream's profile by its version endpoints, or the base's (with why) when it does not say in time. */
export async function upstreamServer(options: ProxyOptions): Promise<CheckedAs> {
  // Refused first as the proxy refuses it: nothing goes to an upstream it would not talk to.
  const { origin } = checkUpstream(options.upstream, options.allowInsecureUpstream);
  const timeoutMs = Math.min(options.timeoutMs ?? 30_000, 10_000);
  const client = createGiteaClient({ baseUrl: `${origin}/api/v1`, retry: 0, timeoutMs });
  try {
    const { family, version, profile, warning } = await detectServer(client);
    const server = `${family === 'forgejo' ? 'Forgejo' : 'Gitea'} ${version}`;
    return { profile, server, ...(warning ? { warning } : {}) };
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    return {
      profile: BASE_PROFILE,
      warning: `the upstream did not say which server it is (${cause}): its exchanges are checked against ${BASE_PROFILE}; give --server to choose`,
    };
  }
}
