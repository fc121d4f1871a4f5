// What the server a profile names does otherwise in the sandbox's operations than Gitea 1.27, the base: each rule
// follows an action of profiles/<name>.yaml, which cites the server's source line. Without a profile: the base's rules.
// What a profile's document refuses in a request (a `content_version` where it has none, an event name it lacks)
// never reaches the sandbox, so needs no rule.
import { isForgejo, isObject, profileOf } from '../contract/document.js';
import { giteaMinor } from '../front/server-profile.js';

export interface ServerRules {
  /** E2 refuses a redirect URI that is no URL (Gitea 1.27); earlier servers store any. */
  checksRedirectUris: boolean;
  /** E3's `422` for a clone address that is no URL names it (`ErrInvalidCloneAddr`), as every server but Gitea 1.27 does. */
  namesInvalidCloneAddress: boolean;
  /** E1 refuses a `config.url` that is no http(s) URL (not Forgejo 11, which stores it as given). */
  checksHookUrl: boolean;
  /** E1's hook shows `url` and `content_type` beside its `config` (Forgejo's `ToHook`). */
  hookShowsConfig: boolean;
  /** E11 renders as `comment` and `gfm` only those two modes, anything else as `markdown` (Forgejo). */
  markdownModes: 'gitea' | 'forgejo';
  /** The body of `APIErrorNotFound`, as the profile's `NotFound` example has it. */
  notFound: { message: string; errors: string[] | null };
}

export function serverRules(document: Record<string, unknown>): ServerRules {
  const profile = profileOf(document);
  const forgejo = isForgejo(profile);
  const minor = giteaMinor(profile);
  const examples = isObject(document.components) ? document.components.examples : undefined;
  const notFound = isObject(examples) && isObject(examples.NotFound) ? examples.NotFound.value : undefined;
  const found = isObject(notFound) ? notFound : {};
  return {
    checksRedirectUris: !forgejo && minor >= 27,
    namesInvalidCloneAddress: forgejo || minor < 27,
    checksHookUrl: profile !== 'forgejo-11',
    hookShowsConfig: forgejo,
    markdownModes: forgejo ? 'forgejo' : 'gitea',
    notFound: {
      message: typeof found.message === 'string' ? found.message : 'not found',
      errors: Array.isArray(found.errors) ? (found.errors as string[]) : null,
    },
  };
}
