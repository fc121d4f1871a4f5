// Live mode's options that name the records of the sandbox's seed world (the document's examples),
// for a run of `gitea-mock verify` against the mock.
export const SEED_IDS = [
  '--repo',
  'acme/rocket',
  '--key-id',
  '11001',
  '--team-id',
  '12001',
  '--comment-id',
  '15001',
  '--workflow',
  'build.yml',
  '--package',
  'acme/npm/rocket-sdk',
];
