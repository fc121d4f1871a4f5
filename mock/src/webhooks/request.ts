// Gitea's request for one event to one hook (services/webhook/deliver.go `newDefaultRequest`), free of Node built-ins.
import { hmac } from '@noble/hashes/hmac';
import { sha1 } from '@noble/hashes/legacy';
import { sha256 } from '@noble/hashes/sha2';
import { hex, utf8Bytes } from '../common/bytes.js';

/** One event's payload as Gitea writes it: its type (`X-Gitea-Event-Type`), action and JSON. */
export interface Payload {
  type: string;
  action: string;
  json: string;
}

const GROUPS: Record<string, string> = {
  issue_assign: 'issues',
  issue_label: 'issues',
  issue_milestone: 'issues',
  pull_request_assign: 'pull_request',
  pull_request_label: 'pull_request',
  pull_request_milestone: 'pull_request',
  pull_request_sync: 'pull_request',
  pull_request_review_request: 'pull_request',
  pull_request_comment: 'issue_comment',
  pull_request_review_approved: 'pull_request_approved',
  pull_request_review_rejected: 'pull_request_rejected',
  pull_request_review_comment: 'pull_request_comment',
};

/** `X-Gitea-Event`: the event as Gitea groups the types (modules/webhook/type.go, `Event`). */
export const eventOf = (type: string): string => GROUPS[type] ?? type;

/** A hook as a delivery needs it: `type` is `gitea`, `gogs`, or one whose payload Gitea converts (slack …); `contentType` `json` or `form`; `authorization` sent when not empty. */
export interface HookTarget {
  id: number;
  type: string;
  target: 'repository' | 'system';
  url: string;
  contentType: string;
  authorization: string;
}

/** A payload's signatures, in lower-case hexadecimal. */
export interface Signatures {
  sha256: string;
  sha1: string;
}

export type Signer = (secret: string, payload: string) => Signatures;

/** The signer of every runtime; Node's transport brings a native one. */
export const portableSigner: Signer = (secret, payload) => {
  const [key, data] = [utf8Bytes(secret), utf8Bytes(payload)];
  return { sha256: hex(hmac(sha256, key, data)), sha1: hex(hmac(sha1, key, data)) };
};

/** The signatures of `payload`, empty without a secret, as Gitea sends them for a hook without one. */
export const signaturesOf = (secret: string, payload: string, sign: Signer): Signatures =>
  secret === '' ? { sha256: '', sha1: '' } : sign(secret, payload);

export interface OutgoingRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The request of `event` to `hook` with delivery id `id`, with the payload's signatures. */
export function deliveryRequest(id: string, event: Payload, hook: HookTarget, signatures: Signatures): OutgoingRequest {
  const { sha256: signature256, sha1: signature1 } = signatures;
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
  // Go's url.Values.Encode is the form encoding but for `*` (escaped) and `~` (kept).
  const body = form
    ? new URLSearchParams({ payload: event.json }).toString().replace(/\*/g, '%2A').replace(/%7E/g, '~')
    : event.json;
  return { method: 'POST', url: hook.url, headers, body };
}
