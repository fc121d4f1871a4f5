// package: listPackageVersions.
import { describeContract } from './support/contract.js';

const pkg = { owner: 'acme', type: 'npm', name: 'rocket-sdk' } as const;

describeContract('package', {
  listPackageVersions: {
    call: (client, extra) => client.GET('/packages/{owner}/{type}/{name}', { params: { path: pkg }, ...extra }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
});
