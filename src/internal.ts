// `gitea-contract/internal`: what gitea-mock, this package's sibling, takes from the client rather
// than writing again: the redaction of credentials, the `Authorization` value, the /api/v1 hint and
// the test for a host of this machine, and the profile of a server's version. gitea-mock pins this package's exact version; nothing here
// is promised to anyone else, and the package's entry does not export it.
export { authorization, isLoopbackHost } from './auth.js';
export { prefixHint } from './api-prefix.js';
export { profileFor } from './detect.js';
export { CREDENTIAL_HEADER, redact } from './redact.js';
