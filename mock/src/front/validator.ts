// Prism's request and response validators, which the front runs for every answer source (request
// validation answers 422 with their words; answers are checked against the document). Their module
// stands alone in Prism's package, without the mocker and the forwarder, so it loads in a fraction
// of Prism's start-up and bundles for a browser: the MSW handlers' browser build carries it, with a
// stand-in for the one Node built-in it reaches (mime-types takes `extname` from `path`;
// mock/src/msw/path-extname.ts). Not in the package's entry; pinned with the package, like the rest of Prism.
import type * as prism from '@stoplight/prism-http/dist/validator/index.js';
import { validateInput, validateOutput } from '@stoplight/prism-http/dist/validator/index.js';

// Typed through a type-only import, which the package's bundled declarations drop when no public
// type needs it: a value import there would make every consumer's compiler read Prism's types.
export interface PrismValidator {
  validateInput: typeof prism.validateInput;
  validateOutput: typeof prism.validateOutput;
}

export const validator: PrismValidator = { validateInput, validateOutput };
