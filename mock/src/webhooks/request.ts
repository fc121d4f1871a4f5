// The request Gitea sends for one event to one hook (services/webhook/deliver.go `newDefaultRequest`,
// `addDefaultHeaders`): a POST of the JSON payload or of a form field `payload`, signed with the
// secret (HMAC-SHA256; HMAC-SHA1 for `X-Hub-Signature`; empty without one), the event, type,
// delivery id and target type under Gitea's, Gogs' and GitHub's names, the hook's authorization.
// Free of Node built-ins (@noble/hashes signs elsewhere), so the MSW browser build makes it too.
import { hmac } from '@noble/hashes/hmac';
import { sha1 } from '@noble/hashes/legacy';
import { sha256 } from '@noble/hashes/sha2';
import { hex, latin1Text, utf8Bytes } from '../common/bytes.js';

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

/** A payload's signatures, in lower-case hexadecimal. */
export interface Signatures {
  sha256: string;
  sha1: string;
}

/** Signs a payload with a secret (not empty); Node's transport brings a native one. */
export type Signer = (secret: string, payload: string) => Signatures;

/** The signer of every runtime. */
export const portableSigner: Signer = (secret, payload) => {
  const [key, data] = [utf8Bytes(secret), utf8Bytes(payload)];
  return { sha256: hex(hmac(sha256, key, data)), sha1: hex(hmac(sha1, key, data)) };
};

/** The signatures of `payload`, empty without a secret, as Gitea sends them for a hook without one. */
export function signaturesOf(secret: string, payload: string, sign: Signer): Signatures {
  return secret === '' ? { sha256: '', sha1: '' } : sign(secret, payload);
}

export interface OutgoingRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The bytes Go's url.QueryEscape keeps as they are: [A-Za-z0-9-_.~]; a space becomes `+`, the rest %XX. */
const KEPT = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~') KEPT[char.charCodeAt(0)] = 1;
const HEX_DIGITS = utf8Bytes('0123456789ABCDEF');

/** `text` as Go's url.Values.Encode writes a value (Gitea's form payload): one pass over its UTF-8 bytes. */
function formEscape(text: string): string {
  const bytes = utf8Bytes(text);
  const out = new Uint8Array(bytes.length * 3);
  let at = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!;
    if (byte < 128 && KEPT[byte] === 1) out[at++] = byte;
    else if (byte === 0x20) out[at++] = 0x2b;
    else {
      out[at] = 0x25;
      out[at + 1] = HEX_DIGITS[byte >> 4]!;
      out[at + 2] = HEX_DIGITS[byte & 15]!;
      at += 3;
    }
  }
  // Every byte written is ASCII.
  return latin1Text(out.subarray(0, at));
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
  const body = form ? `payload=${formEscape(event.json)}` : event.json;
  return { method: 'POST', url: hook.url, headers, body };
}
