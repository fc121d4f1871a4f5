// miscellaneous: renderMarkdown.
import { expect, inject, it } from 'vitest';
import { createGiteaClient, renderMarkdown } from '../src/index.js';
import { describeContract } from './support/contract.js';

describeContract('miscellaneous', {
  renderMarkdown: {
    call: (client, extra) =>
      client.POST('/markdown', {
        body: { Text: 'Fixed in #42', Mode: 'comment', Context: '/acme/rocket/src/branch/main' },
        parseAs: 'text',
        ...extra,
      }),
    invalid: {
      'an unknown mode': (client) =>
        client.POST('/markdown', { body: { Text: 'hi', Mode: 'slides' as never }, parseAs: 'text' }),
      'text that is not a string': (client) =>
        client.POST('/markdown', { body: { Text: 42 as never }, parseAs: 'text' }),
    },
  },
});

it('renderMarkdown (the helper) resolves to the HTML string', async () => {
  const client = createGiteaClient({ baseUrl: inject('mockBaseUrl'), auth: { token: 'contract-test-token' } });
  await expect(renderMarkdown(client, { Text: 'Fixed in #42', Mode: 'comment' })).resolves.toMatch(
    /^<p>Fixed in <a href=/,
  );
});
