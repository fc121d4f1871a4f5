// admin: adminGetAllOrgs, adminRenameUser.
import { describeContract } from './support/contract.js';

describeContract('admin', {
  adminGetAllOrgs: {
    call: (client, extra) => client.GET('/admin/orgs', { params: { query: { page: 1, limit: 30 } }, ...extra }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
  adminRenameUser: {
    call: (client, extra) =>
      client.POST('/admin/users/{username}/rename', {
        params: { path: { username: 'bob' } },
        body: { new_username: 'robert' },
        ...extra,
      }),
    invalid: {
      'an empty new name': (client) =>
        client.POST('/admin/users/{username}/rename', {
          params: { path: { username: 'bob' } },
          body: { new_username: '' },
        }),
      'a missing new name': (client) =>
        client.POST('/admin/users/{username}/rename', { params: { path: { username: 'bob' } }, body: {} as never }),
    },
  },
});
