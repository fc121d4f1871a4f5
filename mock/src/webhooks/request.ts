// The HTTP request Gitea sends for one event to one hook (services/webhook/deliver.go,
// `newDefaultRequest` and `addDefaultHeaders`): a POST of the JSON payload, or of a form whose
// field `payload` holds it; the payload signed with the hook's secret (HMAC-SHA256, and HMAC-SHA1
// for `X-Hub-Signature`), both signatures empty without a secret; the event, type, delivery id and
// target type under Gitea's, Gogs' and GitHub's names; the hook's authorization header. Synchronous
// and free of Node built-ins (@noble/hashes), so the MSW handlers' browser build makes it too.
import { hmac } from '@noble/hashes/hmac';
import { sha1 } from '@noble/hashes/legacy';
import { sha256 } from '@noble/hashes/sha2';
import { hex, randomUuid, utf8Bytes } from '../bytes.js';
import { eventOf, type HookEvent } from './payloads.js';

/** Where a hook is set, as `X-Gitea-Hook-Installation-Target-Type` says it. */
type TargetType = 'repository' | 'system';

/** A hook as a delivery needs it. */
export interface HookTarget {
  id: number;
  /** `gitea`, `gogs`, or a type whose payload Gitea converts (slack, discord …). */
  type: string;
  target: TargetType;
  url: string;
  /** `json` or `form`. */
  contentType: string;
  /** Sent as `Authorization`, when not empty. */
  authorization: string;
}

export interface OutgoingRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** `text` as Go's url.Values.Encode writes a value: `+` for a space, every byte but [A-Za-z0-9-_.~] as %XX. */
function formEscape(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The request of `event` to `hook`, signed with `secret` (empty: unsigned, as Gitea sends it). */
export function deliveryRequest(event: HookEvent, hook: HookTarget, secret: string): OutgoingRequest {
  const id = randomUuid();
  const payload = utf8Bytes(event.json);
  const key = utf8Bytes(secret);
  const signature256 = secret === '' ? '' : hex(hmac(sha256, key, payload));
  const signature1 = secret === '' ? '' : hex(hmac(sha1, key, payload));
  const group = eventOf(event.type);
  const form = hook.contentType === 'form';
  const headers: Record<string, string> = {
    'Content-Type': form ? 'application/x-www-form-urlencoded' : 'application/json',
    'X-Gitea-Delivery': id,
    'X-Gitea-Event': group,
    'X-Gitea-Event-Type': event.type,
    'X-Gitea-Signature': signature256,
    'X-Gitea-Hook-Installation-Target-Type': hook.target,
    'X-Gogs-Delivery': id,
    'X-Gogs-Event': group,
    'X-Gogs-Event-Type': event.type,
    'X-Gogs-Signature': signature256,
    'X-Hub-Signature': `sha1=${signature1}`,
    'X-Hub-Signature-256': `sha256=${signature256}`,
    'X-GitHub-Delivery': id,
    'X-GitHub-Event': group,
    'X-GitHub-Event-Type': event.type,
    'X-GitHub-Hook-Installation-Target-Type': hook.target,
    // Go's client names itself so when Gitea sets no User-Agent.
    'User-Agent': 'Go-http-client/1.1',
    ...(hook.authorization === '' ? {} : { Authorization: hook.authorization }),
  };
  const body = form ? `payload=${formEscape(event.json)}` : event.json;
  return { method: 'POST', url: hook.url, headers, body };
}
