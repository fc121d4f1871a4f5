// organization: orgEditLabel (E10), orgListTeamMembers (E12).
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
      'a non-numeric label id': (client) =>
        client.PATCH('/orgs/{org}/labels/{id}', { params: { path: { org: 'acme', id: 'bug' as never } }, body: {} }),
    },
  },
  orgListTeamMembers: {
    call: (client, extra) =>
      client.GET('/teams/{id}/members', { params: { path: { id: 12001 }, query: { limit: 30 } }, ...extra }),
    invalid: {
      'a non-numeric team id': (client) =>
        client.GET('/teams/{id}/members', { params: { path: { id: 'release' as never } } }),
      'a limit that is not a number': (client) =>
        client.GET('/teams/{id}/members', { params: { path: { id: 12001 }, query: { limit: 'all' as never } } }),
    },
  },
});

it('collectAll pages through the team members the mock holds', async () => {
  const client = createGiteaClient({ baseUrl: inject('mockBaseUrl'), auth: { token: 'contract-test-token' } });
  const members = await collectAll(client, '/teams/{id}/members', {
    params: { path: { id: 12001 }, query: { limit: 1 } },
  });
  expect(members.map((user) => user.login)).toEqual(['alice', 'bob', 'carol']);
});
