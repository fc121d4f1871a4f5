// Where the contract is: the openapi.yaml of the gitea-contract package this package depends on
// (in this repository, the root package, linked into node_modules by the workspace).
import { createRequire } from 'node:module';

export const DOCUMENT = createRequire(import.meta.url).resolve('gitea-contract/openapi.yaml');
