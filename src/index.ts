// The package's entry: the client factory, its standalone helpers and the contract's types.
export { createGiteaClient, type GiteaClient, type GiteaClientOptions } from './client.js';
export type { Auth } from './auth.js';
export { detectServer, type DetectedServer } from './detect.js';
export { SERVER_PROFILES, type AbsentOperations, type ServerProfile } from '../generated/profiles.js';
export { ApiError, TimeoutError, WebhookError, type WebhookErrorCode } from './errors.js';
export type { RetryOptions } from './transport.js';
export { unwrap } from './unwrap.js';
export { collectAll, paginate, type PaginatedPath, type PaginateOptions } from './paginate.js';
export { uploadReleaseAttachment, type ReleaseAttachmentUpload } from './upload.js';
export { renderMarkdown } from './markdown.js';
export { markNotificationThread } from './notifications.js';
export { verifyWebhookSignature } from './webhook-signature.js';
export {
  parseWebhook,
  type OtherWebhookDelivery,
  type ParseWebhookOptions,
  type WebhookDelivery,
  type WebhookName,
  type WebhookPayload,
} from './webhooks.js';
export {
  createNodeMiddleware,
  createWebhookRouter,
  type NodeMiddlewareOptions,
  type WebhookEventName,
  type WebhookEventOf,
  type WebhookRouter,
  type WebhookRouterError,
  type WebhookRouterOptions,
} from './webhook-router.js';
export * from './types.js';
