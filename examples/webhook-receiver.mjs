// Receives Gitea's webhook deliveries, checks their signatures and reacts to what the contract
// describes: a pull request closed, assignees removed. Anything else signed is acknowledged.
//
//   WEBHOOK_SECRET=… node examples/webhook-receiver.mjs [port]
//
// Point a hook at http://127.0.0.1:<port>/ with the same secret: on a Gitea server, or on the mock
// (`npx gitea-mock --sandbox --webhook-secret …`, then repoEditHook sets the hook's URL and events).
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { parseWebhook, WebhookError } from '../dist/index.js';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the hook secret');
  process.exit(2);
}

const server = createServer(async (req, res) => {
  // parseWebhook reads a Fetch API Request, as Deno, Bun and edge runtimes hand one over; from
  // node:http, make one.
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([name, value]) => [value ?? []].flat().map((one) => [name, one])),
    ...(req.method === 'POST' ? { body: Readable.toWeb(req), duplex: 'half' } : {}),
  });
  try {
    const delivery = await parseWebhook(request, { secret });
    if (delivery.known && delivery.type === 'pull_request' && delivery.payload.action === 'closed') {
      const { number, pull_request, sender } = delivery.payload;
      console.log(`pull request #${number} "${pull_request.title}" closed by ${sender.login}`);
    } else if (delivery.known && (delivery.type === 'issue_assign' || delivery.type === 'pull_request_assign')) {
      console.log(
        `#${delivery.payload.number}: an assignee was ${delivery.payload.action} by ${delivery.payload.sender.login}`,
      );
    } else {
      console.log(`${delivery.type} ${delivery.payload?.action ?? ''}: acknowledged`);
    }
    res.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof WebhookError)) throw error;
    // 401 for a missing or wrong signature, 400 for what is no Gitea delivery, 413 for too much.
    console.error(`refused ${error.code}: ${error.message}`);
    res.writeHead(error.status, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`);
  }
});

server.listen(Number(process.argv[2] ?? 4012), '127.0.0.1', () => {
  console.log(`receiving webhooks on http://127.0.0.1:${server.address().port}/`);
});
