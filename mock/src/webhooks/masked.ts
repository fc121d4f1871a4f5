// What the mock shows of a hook's secrets: the mark Gitea's delivery log puts in place of the
// hook's `Authorization` (services/webhook/deliver.go, `Deliver`), for that header and for the
// password of a hook's URL, in the log, in `onDelivery` and in the mock's own lines alike.

/** What stands for a secret the mock does not show. */
export const MASK = '******';

/** `url` with its password masked, as a line or a log may show it; a text that is no URL as it is. */
export function withoutPassword(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password === '') return url;
  parsed.password = MASK;
  return parsed.href;
}
