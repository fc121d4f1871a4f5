// notification: notifyReadThread, which answers 205 with a body fetch cannot read.
import { expect, inject, it } from 'vitest';
import { createGiteaClient, markNotificationThread } from '../src/index.js';
import { describeContract } from './support/contract.js';

describeContract('notification', {
  notifyReadThread: {
    call: (client, extra) =>
      client.PATCH('/notifications/threads/{id}', {
        params: { path: { id: '10001' }, query: { 'to-status': 'read' } },
        ...extra,
      }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
});

it('markNotificationThread (the helper) never throws on the 205', async () => {
  const client = createGiteaClient({ baseUrl: inject('mockBaseUrl'), auth: { token: 'contract-test-token' } });
  await expect(markNotificationThread(client, { id: 10001, toStatus: 'pinned' })).resolves.toBeUndefined();
});
