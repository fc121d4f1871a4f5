// admin: adminGetAllOrgs (E19), adminRenameUser (E18).
import { describeContract } from './support/contract.js';

describeContract('admin', {
  adminGetAllOrgs: {
    call: (client, extra) => client.GET('/admin/orgs', { params: { query: { page: 1, limit: 30 } }, ...extra }),
    invalid: {
      'a limit above 50': (client) => client.GET('/admin/orgs', { params: { query: { limit: 51 } } }),
      'a page below 1': (client) => client.GET('/admin/orgs', { params: { query: { page: 0 } } }),
    },
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
