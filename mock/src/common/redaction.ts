// The mock's one redaction, the client's `redact`; Gitea's own mark only where the mock shows Gitea's delivery log.
import { redact } from 'gitea-contract/internal';

export { redact };

/** The one redaction mark: what redact writes in place of a secret. */
export const REDACTION_MARK = redact('mark', ['mark']);

/** Gitea's mark for a hook's `Authorization` and URL password in its delivery log (services/webhook/deliver.go `Deliver`). */
export const GITEA_MASK = '******';

/** `url` with its password masked as the delivery log shows it; a text that is no URL as it is. */
export function withoutPassword(url: string): string {
  // No `@`, no credentials: not parsed.
  if (!url.includes('@')) return url;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed?.password) return url;
  parsed.password = GITEA_MASK;
  return parsed.href;
}
