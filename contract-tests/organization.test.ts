// organization: orgEditLabel, orgListTeamMembers.
import { expect, inject, it } from 'vitest';
import { collectAll, createGiteaClient } from '../src/index.js';
import { describeContract } from './support/contract.js';

describeContract('organization', {
  orgEditLabel: {
    call: (client, extra) =>
      client.PATCH('/orgs/{org}/labels/{id}', {
        params: { path: { org: 'acme', id: 5001 } },
        body: { color: '#D93F0B', exclusive: true },
        ...extra,
      }),
    invalid: {
      'a colour that is not hexadecimal': (client) =>
        client.PATCH('/orgs/{org}/labels/{id}', {
          params: { path: { org: 'acme', id: 5001 } },
          body: { color: 'red' },
        }),
    },
  },
  orgListTeamMembers: {
    call: (client, extra) =>
      client.GET('/teams/{id}/members', { params: { path: { id: 12001 }, query: { limit: 30 } }, ...extra }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
});

it('collectAll pages through the team members the mock holds', async () => {
  const client = createGiteaClient({ baseUrl: inject('mockBaseUrl'), auth: { token: 'contract-test-token' } });
  const members = await collectAll(client, '/teams/{id}/members', {
    params: { path: { id: 12001 }, query: { limit: 1 } },
  });
  expect(members.map((user) => user.login)).toEqual(['alice', 'bob', 'carol']);
});
