// The examples source chooses its answers without Prism (mock/src/examples/negotiation.ts), so that
// the MSW handlers answer in a browser as the server does. Here its choice is held to Prism's own
// static mocker, in process: for each of the 20 operations, with no Prefer and with each documented
// status and each named example, under a range of Accept headers, the same status, headers and
// body, or the same refusal. The one difference on purpose: an Accept
// that is no media type, where Prism throws (a 500 of the mock), answers 406 here.
import type { IHttpOperation } from '@stoplight/types';
import { describe, expect, it } from 'vitest';
import {
  documentedAnswer,
  loadPrismMocker,
  type Mocked,
  operationTableOf,
  type Wanted,
} from '../test/support/mock-internals.js';

const DOCUMENT = new URL('../openapi.yaml', import.meta.url).pathname;

/** None; anything; JSON (renderMarkdown has none); a preference; a parameter that only the retry without parameters meets; nothing documented; refused. */
const ACCEPTS = [
  undefined,
  '*/*',
  'application/json',
  'application/json;q=0.5, text/html',
  'text/plain;format=fixed',
  'image/png',
  '*/*;q=0',
];

type Prisms = (operation: IHttpOperation, wanted: Wanted) => Promise<Mocked>;

/** Prism's static mocker, asked for an operation's answer with no request but its path and Accept. */
async function prismStatic(): Promise<Prisms> {
  const mocker = await loadPrismMocker(false);
  return (operation, { code, exampleKey, accept }) =>
    mocker(
      {
        method: operation.method as 'get',
        url: { path: operation.path.replace(/\{[^}]+\}/g, 'x') },
        headers: accept === undefined ? {} : { accept },
      },
      operation,
      { ...(code === undefined ? {} : { code }), ...(exampleKey === undefined ? {} : { exampleKey }) },
    );
}

describe("the examples source chooses as Prism's static mocker", () => {
  it('for every operation, documented status, named example and Accept header', async () => {
    const [table, prism] = await Promise.all([operationTableOf(DOCUMENT), prismStatic()]);
    let compared = 0;
    for (const op of table.operations) {
      const asks: Wanted[] = [{}];
      for (const [code, names] of op.responses)
        asks.push({ code }, ...names.map((exampleKey) => ({ code, exampleKey })));
      for (const ask of asks) {
        for (const accept of ACCEPTS) {
          const wanted = { ...ask, ...(accept === undefined ? {} : { accept }) };
          expect({ op: op.operationId, wanted, answer: documentedAnswer(op.operation, wanted) }).toEqual({
            op: op.operationId,
            wanted,
            answer: await prism(op.operation, wanted),
          });
          compared++;
        }
      }
    }
    console.log(`examples negotiation: ${compared} answers compared with Prism's`);
    expect(compared).toBeGreaterThan(1_500);
  }, 60_000);

  it('answers an Accept that is no media type 406, where Prism threw', async () => {
    const table = await operationTableOf(DOCUMENT);
    const route = table.route('GET', '/repos/acme/rocket/keys/11001');
    if (route.kind !== 'match') throw new Error('no route');
    expect(documentedAnswer(route.op.operation, { accept: 'garbage' })).toEqual({
      ok: false,
      status: 406,
      message: 'Unable to find content for garbage',
    });
    await expect((await prismStatic())(route.op.operation, { accept: 'garbage' })).rejects.toThrow(
      /invalid media type/,
    );
  });
});
