// A webhook bot: Gitea's deliveries routed by event type and action, each signature checked
// before any handler runs. A refused delivery is answered 4xx and reaches no handler.
//
//   WEBHOOK_SECRET=… node examples/webhook-receiver.mjs [port]
//
// Point a hook at http://127.0.0.1:<port>/hook with the same secret: on a Gitea server, or on the
// mock (`GITEA_WEBHOOK_SECRET=… npx gitea-mock sandbox`, then repoEditHook sets the hook's URL and
// events, or `POST /__sandbox/trigger` fires any event).
import { createServer } from 'node:http';
import { createNodeMiddleware, createWebhookRouter } from '../dist/index.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the hook secret');
  process.exit(2);
}

const router = createWebhookRouter({ secret });
router.on('pull_request.closed', ({ payload }) => {
  console.log(`pull request #${payload.number} "${payload.pull_request.title}" closed by ${payload.sender.login}`);
});
router.on(['issue_assign', 'pull_request_assign'], ({ payload }) => {
  console.log(`#${payload.number}: an assignee was ${payload.action} by ${payload.sender.login}`);
});
router.on('push', ({ payload }) => {
  console.log(`${payload.pusher.login} pushed ${payload.commits.length} commit(s) to ${payload.ref}`);
});
router.onError((failure) => {
  // 401 for a missing or wrong signature, 400 for what is no Gitea delivery, 413 for too much.
  if (failure.kind === 'refused') console.error(`refused ${failure.error.code}: ${failure.error.message}`);
  else console.error(`a handler failed on delivery ${failure.delivery.delivery}:`, failure.error);
});

const server = createServer(createNodeMiddleware(router, { path: '/hook' }));
server.listen(Number(process.argv[2] ?? 4012), '127.0.0.1', () => {
  console.log(`receiving webhooks on http://127.0.0.1:${server.address().port}/hook`);
});
