// Compile-time guarantees of parseWebhook: `known` and `type` narrow `payload` to the webhook's
// payload as the contract describes it, with its actions.
import { describe, expectTypeOf, it } from 'vitest';
import {
  createWebhookRouter,
  parseWebhook,
  type IssueCommentPayload,
  type IssuePayload,
  type PayloadCommit,
  type PullRequestPayload,
  type PushPayload,
  type ReleasePayload,
  type RepositoryPayload,
  type ReviewPayload,
  type User,
  type WebhookPayload,
} from '../../src/index.js';

declare const request: Request;

describe('a parsed delivery narrows by its event type', () => {
  it('types the payload of each webhook, and leaves the rest unknown', async () => {
    const delivery = await parseWebhook(request, { secret: 's' });
    if (!delivery.known) {
      expectTypeOf(delivery.payload).toEqualTypeOf<unknown>();
      expectTypeOf(delivery.type).toEqualTypeOf<string>();
      return;
    }
    switch (delivery.type) {
      case 'pull_request':
        expectTypeOf(delivery.event).toEqualTypeOf<'pull_request'>();
        expectTypeOf(delivery.payload).toMatchTypeOf<PullRequestPayload>();
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'closed' | 'deleted' | 'edited' | 'opened' | 'reopened'>();
        break;
      case 'issue_assign':
        expectTypeOf(delivery.event).toEqualTypeOf<'issues'>();
        expectTypeOf(delivery.payload).toMatchTypeOf<IssuePayload>();
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'assigned' | 'unassigned'>();
        break;
      case 'repository':
        expectTypeOf(delivery.payload).toMatchTypeOf<RepositoryPayload>();
        expectTypeOf(delivery.payload.organization).toEqualTypeOf<User>();
        // @ts-expect-error a repository delivery has no issue
        delivery.payload.issue;
        break;
      case 'pull_request_assign':
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'assigned' | 'unassigned'>();
        break;
      case 'pull_request_milestone':
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'demilestoned' | 'milestoned'>();
        break;
      case 'push':
        expectTypeOf(delivery.event).toEqualTypeOf<'push'>();
        expectTypeOf(delivery.payload).toEqualTypeOf<PushPayload>();
        expectTypeOf(delivery.payload.commits).toEqualTypeOf<PayloadCommit[]>();
        expectTypeOf(delivery.payload.head_commit).toEqualTypeOf<PayloadCommit | null>();
        // @ts-expect-error a push has no action
        delivery.payload.action;
        break;
      case 'issue_comment':
      case 'pull_request_comment':
        expectTypeOf(delivery.event).toEqualTypeOf<'issue_comment'>();
        expectTypeOf(delivery.payload).toMatchTypeOf<IssueCommentPayload>();
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'created' | 'deleted' | 'edited'>();
        expectTypeOf(delivery.payload.is_pull).toEqualTypeOf<boolean>();
        break;
      case 'release':
        expectTypeOf(delivery.payload).toMatchTypeOf<ReleasePayload>();
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'deleted' | 'published' | 'updated'>();
        expectTypeOf(delivery.payload.release.tag_name).toEqualTypeOf<string>();
        break;
      case 'pull_request_review_approved':
        expectTypeOf(delivery.event).toEqualTypeOf<'pull_request_approved'>();
        expectTypeOf(delivery.payload.action).toEqualTypeOf<'reviewed'>();
        expectTypeOf(delivery.payload.review).toEqualTypeOf<ReviewPayload | null>();
        expectTypeOf(delivery.payload.requested_reviewer).toEqualTypeOf<User | null>();
        break;
      case 'create':
      case 'delete':
      case 'fork':
      case 'issues':
      case 'issue_label':
      case 'issue_milestone':
      case 'package':
      case 'pull_request_label':
      case 'pull_request_review_comment':
      case 'pull_request_review_rejected':
      case 'pull_request_review_request':
      case 'pull_request_sync':
      case 'status':
      case 'wiki':
      case 'workflow_job':
      case 'workflow_run':
        expectTypeOf(delivery.payload).toHaveProperty('repository');
        break;
      default:
        expectTypeOf(delivery).toEqualTypeOf<never>();
    }
  });

  it('needs a secret, or null for a hook without one', () => {
    // @ts-expect-error the secret is not optional
    void parseWebhook(request, {});
    void parseWebhook(request, { secret: null });
  });
});

describe('createWebhookRouter narrows each handler to its event and action', () => {
  it('types the payload of a type, of a type and action, and of onAny', () => {
    const router = createWebhookRouter({ secret: 's' });
    router.on('pull_request.closed', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'pull_request'>();
      expectTypeOf(event.payload.action).toEqualTypeOf<'closed'>();
      expectTypeOf(event.payload).toMatchTypeOf<PullRequestPayload>();
    });
    router.on('pull_request', (event) => {
      expectTypeOf(event.payload.action).toEqualTypeOf<WebhookPayload<'pull_request'>['action']>();
    });
    // A type without actions is routed by its type alone.
    router.on('push', (event) => {
      expectTypeOf(event.payload).toMatchTypeOf<PushPayload>();
    });
    // @ts-expect-error a push has no action to route by
    router.on('push.created', () => {});
    router.on(['issue_assign', 'pull_request_assign'], (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'issue_assign' | 'pull_request_assign'>();
    });
    router.onAny((event) => {
      expectTypeOf(event.payload).toEqualTypeOf<unknown>();
    });
    // @ts-expect-error no pull request is ever "exploded"
    router.on('pull_request.exploded', () => {});
    // @ts-expect-error an event type the contract does not name
    router.on('pull_requests', () => {});
  });
});
