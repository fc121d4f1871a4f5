// Generated answers (`--dynamic`): Prism's mocker in its dynamic mode, Node only; faker draws from the seeded `random`.
import { createRequire } from 'node:module';
import type { IHttpConfig } from '@stoplight/prism-http';
import type { Generator } from './examples.js';

/** Prism's mocker only: the front validates requests and answers itself. */
const MOCK_ONLY = {
  validateRequest: false,
  validateResponse: false,
  checkSecurity: false,
  errors: false,
  upstreamProxy: undefined,
  isProxy: false,
} as const;

/** Prism's mocker, static or dynamic, one operation at a time; silent, as its logging costs throughput and shows requests. */
export async function loadPrismMocker(dynamic: boolean): Promise<Generator> {
  const [http, core] = await Promise.all([import('@stoplight/prism-http'), import('@stoplight/prism-core')]);
  const fromPrism = createRequire(createRequire(import.meta.url).resolve('@stoplight/prism-http'));
  // Faker 6, the instance Prism hands json-schema-faker.
  const { faker } = fromPrism('@faker-js/faker') as {
    faker: { mersenne?: { rand(max?: number, min?: number): number } };
  };
  const { JSONSchemaFaker: jsf } = fromPrism('json-schema-faker') as {
    JSONSchemaFaker: { option(name: 'random'): () => number };
  };
  // Every draw of faker 6 goes through `mersenne.rand` (max exclusive, min inclusive).
  if (typeof faker.mersenne?.rand !== 'function') throw new Error("faker's generator is not where --seed expects it");
  faker.mersenne.rand = (max = 32768, min = 0) => {
    const [low, high] = min > max ? [max, min] : [min, max];
    return Math.floor(jsf.option('random')() * (high - low) + low);
  };
  const prism = http.createInstance(
    { ...MOCK_ONLY, mock: { dynamic } },
    { logger: core.createLogger('gitea-mock', { level: 'silent' }) },
  );
  return async (request, operation, wanted) => {
    // A fresh config per request: Prism's mocker writes the request's Accept into it.
    const config: IHttpConfig = { ...MOCK_ONLY, mock: { dynamic, ...wanted } };
    const result = await prism.request(request, [operation], config)();
    if (result._tag === 'Left') {
      const error = result.left as Error & { status?: number; detail?: string };
      return { ok: false, status: error.status ?? 500, message: error.detail || error.message };
    }
    const { statusCode, headers, body } = result.right.output;
    return { ok: true, output: { statusCode, headers: headers ?? {}, body } };
  };
}
