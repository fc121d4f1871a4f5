// user: updateUserSecret, userCreateOAuth2Application, userCurrentPostGPGKey.
import { describeContract } from './support/contract.js';

const KEY =
  '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEaBcxABYJKwYBBAHaRw8BAQdA\n=wXyZ\n-----END PGP PUBLIC KEY BLOCK-----\n';

describeContract('user', {
  updateUserSecret: {
    call: (client, extra) =>
      client.PUT('/user/actions/secrets/{secretname}', {
        params: { path: { secretname: 'DEPLOY_TOKEN' } },
        body: { data: 's3cr3t-d3pl0y', description: 'deploy' },
        ...extra,
      }),
    invalid: {
      'a missing secret value': (client) =>
        client.PUT('/user/actions/secrets/{secretname}', {
          params: { path: { secretname: 'DEPLOY_TOKEN' } },
          body: { description: 'no data' } as never,
        }),
      'an empty secret value': (client) =>
        client.PUT('/user/actions/secrets/{secretname}', {
          params: { path: { secretname: 'DEPLOY_TOKEN' } },
          body: { data: '' },
        }),
    },
  },
  userCreateOAuth2Application: {
    call: (client, extra) =>
      client.POST('/user/applications/oauth2', {
        body: {
          name: 'Rocket CI dashboard',
          redirect_uris: ['https://ci.example.net/oauth/callback'],
          confidential_client: true,
        },
        ...extra,
      }),
    invalid: {
      'no redirect URI': (client) =>
        client.POST('/user/applications/oauth2', { body: { name: 'Rocket CI', redirect_uris: [] } }),
      'a confidential flag that is not a boolean': (client) =>
        client.POST('/user/applications/oauth2', {
          body: {
            name: 'Rocket CI',
            redirect_uris: ['https://ci.example.net/cb'],
            confidential_client: 'yes' as never,
          },
        }),
    },
  },
  userCurrentPostGPGKey: {
    call: (client, extra) => client.POST('/user/gpg_keys', { body: { armored_public_key: KEY }, ...extra }),
    invalid: {
      'a missing key': (client) => client.POST('/user/gpg_keys', { body: { armored_signature: 'sig' } as never }),
    },
  },
});
