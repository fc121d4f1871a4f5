// Checks one delivery against the document's `webhooks:`, as the proxy checks an exchange: the webhook
// of `X-Gitea-Event-Type` with an action it declares (else outside the contract), its headers, media
// type and payload valid, each signature the payload's with the secret. A payload past the bounds of
// every JSON body the mock reads is refused unchecked.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { redact } from '../common/redaction.js';
import { GO_MAX_DEPTH, pastJsonBounds } from '../front/body.js';
import { MAX_CHECKED_VALUES } from '../contract/json-shape.js';
import { bodyViolations, headerViolations, type Violation } from '../contract/conformance.js';
import {
  isObject,
  listWebhooks,
  operationParameters,
  pointer,
  type JsonObject,
  type Operation,
} from '../contract/document.js';
import type { SchemaValidator } from '../contract/schema.js';

/** A delivery as received. */
interface ReceivedDelivery {
  method: string;
  /** The path and query it was sent to. */
  url: string;
  headers: Headers;
  body: string;
}

type DeliveryCheck =
  /** A webhook of the contract: its name, the payload's action, and what breaks the document (none: it conforms). */
  | { webhook: string; action: string; violations: Violation[] }
  /** An event type or action the contract does not describe. */
  | { outside: string }
  /** A payload too large to check: answered with `status`, as the mock's front answers such a body. */
  | { refused: { status: 413 | 422; message: string } };

/** The actions a webhook's JSON body declares (`allOf` of the payload and `{action: {enum}}`). */
function actionsOf(webhook: Operation): string[] {
  const body = webhook.operation.requestBody;
  const schema = isObject(body) && isObject(body.content) ? body.content['application/json'] : undefined;
  const parts =
    isObject(schema) && isObject(schema.schema) && Array.isArray(schema.schema.allOf) ? schema.schema.allOf : [];
  return parts.flatMap((part) => {
    const action = isObject(part) && isObject(part.properties) ? part.properties.action : undefined;
    return isObject(action) && Array.isArray(action.enum) ? action.enum.map(String) : [];
  });
}

const hmacHex = (algorithm: 'sha1' | 'sha256', secret: string, payload: string): string =>
  createHmac(algorithm, secret).update(payload, 'utf8').digest('hex');

/** Whether two texts are equal, compared in constant time. */
function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface DeliveryChecker {
  /** The webhooks of the document, by event type. */
  readonly names: readonly string[];
  check(delivery: ReceivedDelivery, secret: string | undefined): DeliveryCheck;
}

export function createDeliveryChecker(doc: JsonObject, schemas: SchemaValidator): DeliveryChecker {
  const webhooks = new Map(listWebhooks(doc).map((webhook) => [webhook.path, webhook]));
  return {
    names: [...webhooks.keys()],
    check({ method, url, headers, body }, secret) {
      const type = headers.get('x-gitea-event-type') ?? '';
      const webhook = webhooks.get(type);
      if (!webhook)
        return {
          outside: `${type ? `the event type ${JSON.stringify(type)}` : 'a request without X-Gitea-Event-Type'} is not in the contract (it describes ${[...webhooks.keys()].join(', ')})`,
        };
      const violations: Violation[] = [];
      const media = headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
      const requestBody = webhook.operation.requestBody as JsonObject;
      const declared = Object.keys(isObject(requestBody.content) ? requestBody.content : {});
      let text: string | null = body;
      if (method === 'GET') text = new URL(url, 'http://receiver').searchParams.get('payload');
      else if (!declared.includes(media)) {
        violations.push({
          where: 'request content type',
          problem: `${media || '(none)'} is not declared (declared: ${declared.join(', ')})`,
        });
      } else if (media === 'application/x-www-form-urlencoded') text = new URLSearchParams(body).get('payload');
      let payload: unknown;
      if (text === null) violations.push({ where: 'request body', problem: 'has no payload field' });
      else {
        try {
          payload = JSON.parse(text);
        } catch {
          violations.push({ where: 'request body', problem: 'the payload is not valid JSON' });
        }
      }
      const past = pastJsonBounds(payload);
      if (past === 'values')
        return {
          refused: {
            status: 413,
            message: `the payload holds more than ${MAX_CHECKED_VALUES} JSON values, more than the receiver checks`,
          },
        };
      if (past === 'depth')
        return {
          refused: {
            status: 422,
            message: `the payload nests deeper than ${GO_MAX_DEPTH} levels, more than the receiver checks`,
          },
        };
      const action = isObject(payload) && typeof payload.action === 'string' ? payload.action : '';
      const actions = actionsOf(webhook);
      if (payload !== undefined && action !== '' && !actions.includes(action))
        return {
          outside: `${type} with the action ${JSON.stringify(action)} is not in the contract (it describes ${actions.join(', ')})`,
        };

      const declaredHeaders = operationParameters(doc, webhook)
        .filter(({ param }) => param.in === 'header')
        .map(({ param, location }) => ({ name: String(param.name), spec: param, location }));
      for (const violation of headerViolations(schemas, declaredHeaders, headers))
        violations.push({ ...violation, where: `request ${violation.where}` });

      if (secret !== undefined && text !== null) {
        const sha256 = hmacHex('sha256', secret, text);
        const expected: [string, string][] = [
          ['X-Gitea-Signature', sha256],
          ['X-Gogs-Signature', sha256],
          ['X-Hub-Signature-256', `sha256=${sha256}`],
          ['X-Hub-Signature', `sha1=${hmacHex('sha1', secret, text)}`],
        ];
        for (const [name, value] of expected) {
          const sent = headers.get(name);
          if (sent === null) continue;
          if (!sameText(sent, value))
            violations.push({
              where: `request header ${name}:`,
              problem: /^(sha1=|sha256=)?$/.test(sent)
                ? 'is empty: the hook has no secret'
                : 'does not match the payload signed with the secret given',
            });
        }
      }

      if (payload !== undefined)
        violations.push(
          ...bodyViolations(
            schemas,
            `${webhook.location}/requestBody/content/${pointer(['application/json']).slice(1)}/schema`,
            payload,
            // What a violation quotes is redacted before it is cut.
            (quoted) => redact(quoted, [secret ?? '', headers.get('authorization') ?? '']),
          ).map((violation) => ({ ...violation, where: `request ${violation.where}` })),
        );
      return { webhook: type, action, violations };
    },
  };
}
