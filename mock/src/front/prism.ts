// Loads Prism's HTTP mocker once, for generated answers only (sources/dynamic.ts; the examples
// and the sandbox need no Prism but its validators, validation.ts), in Node only. It also makes
// `--seed` cover faker, which json-schema-faker calls for the document's `x-faker` keywords:
// json-schema-faker draws from its `random` option, which Prism seeds for each answer, while
// faker has a generator of its own that nobody seeds. Prism's faker draws from json-schema-faker's
// `random` instead, so the same seed gives the same answers, `x-faker` fields included.
import { createRequire } from 'node:module';

type PrismHttp = typeof import('@stoplight/prism-http');
type PrismCore = typeof import('@stoplight/prism-core');
export interface Prism {
  http: PrismHttp;
  core: PrismCore;
}

/** What the seeding needs of faker 6, the instance Prism hands json-schema-faker. */
interface Faker {
  mersenne?: { rand(max?: number, min?: number): number };
}
interface JsonSchemaFaker {
  option(name: 'random'): () => number;
}

let loading: Promise<Prism> | undefined;

/** Makes Prism's faker draw from json-schema-faker's `random`. */
function seedFaker(): void {
  const fromPrism = createRequire(createRequire(import.meta.url).resolve('@stoplight/prism-http'));
  const { faker } = fromPrism('@faker-js/faker') as { faker: Faker };
  const { JSONSchemaFaker: jsf } = fromPrism('json-schema-faker') as { JSONSchemaFaker: JsonSchemaFaker };
  // Every draw of faker 6 goes through `mersenne.rand` (max exclusive, min inclusive).
  if (typeof faker.mersenne?.rand !== 'function') throw new Error("faker's generator is not where --seed expects it");
  faker.mersenne.rand = (max = 32768, min = 0) => {
    const [low, high] = min > max ? [max, min] : [min, max];
    return Math.floor(jsf.option('random')() * (high - low) + low);
  };
}

export function loadPrism(): Promise<Prism> {
  loading ??= (async () => {
    const [http, core] = await Promise.all([import('@stoplight/prism-http'), import('@stoplight/prism-core')]);
    seedFaker();
    return { http, core };
  })();
  return loading;
}
