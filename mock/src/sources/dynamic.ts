// Generated answers (`--dynamic`, `Prefer: dynamic=true`): Prism's mocker in its dynamic mode,
// json-schema-faker over the schemas, seeded with `--seed`. Node only: Prism's mocker loads its
// forwarder (node-fetch, proxy agents), and prism.ts installs its faker through Node's module
// cache. The examples source (examples.ts) takes it as its `generator`; the browser build has none.
import type { IHttpConfig } from '@stoplight/prism-http';
import type { Generator } from './examples.js';
import { loadPrism } from '../front/prism.js';

export async function loadGenerator(): Promise<Generator> {
  const { http, core } = await loadPrism();
  // Prism's own logging costs half its throughput and would leak request details. The front
  // validates requests and answers itself, so Prism only mocks.
  const prism = http.createInstance(
    {
      validateRequest: false,
      validateResponse: false,
      checkSecurity: false,
      errors: false,
      upstreamProxy: undefined,
      isProxy: false,
      mock: { dynamic: true },
    },
    { logger: core.createLogger('gitea-mock', { level: 'silent' }) },
  );
  return async (request, operation, { code, exampleKey, seed }) => {
    // A fresh config per request: Prism's mocker writes the request's Accept into it.
    const config: IHttpConfig = {
      validateRequest: false,
      validateResponse: false,
      checkSecurity: false,
      errors: false,
      upstreamProxy: undefined,
      isProxy: false,
      mock: {
        dynamic: true,
        ...(seed === undefined ? {} : { seed }),
        ...(code === undefined ? {} : { code }),
        ...(exampleKey === undefined ? {} : { exampleKey }),
      },
    };
    const result = await prism.request(request, [operation], config)();
    if (result._tag === 'Left') {
      const error = result.left as Error & { status?: number; detail?: string };
      return { ok: false, status: error.status ?? 500, message: error.detail || error.message };
    }
    const { statusCode, headers, body } = result.right.output;
    return { ok: true, output: { statusCode, headers: headers ?? {}, body } };
  };
}
