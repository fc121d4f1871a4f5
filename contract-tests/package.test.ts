// package: listPackageVersions (E7).
import { describeContract } from './support/contract.js';

const pkg = { owner: 'acme', type: 'npm', name: 'rocket-sdk' } as const;

describeContract('package', {
  listPackageVersions: {
    call: (client, extra) => client.GET('/packages/{owner}/{type}/{name}', { params: { path: pkg }, ...extra }),
    invalid: {
      'an unknown package type': (client) =>
        client.GET('/packages/{owner}/{type}/{name}', { params: { path: { ...pkg, type: 'tarball' as never } } }),
      'a limit above 50': (client) =>
        client.GET('/packages/{owner}/{type}/{name}', { params: { path: pkg, query: { limit: 500 } } }),
    },
  },
});
