// The sandbox's world as JSON (mock/src/sandbox/world-json.ts): its copy, its text in pieces and
// the size of that text must each agree with JSON.stringify, for any JSON value and for the seed
// world, with odd strings (escapes, lone surrogates, "__proto__" keys) included.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  copyJson,
  loadOperations,
  readDocumentFile,
  seedWorld,
  textBytes,
  worldText,
} from '../test/support/mock-internals.js';

const SEED = Number(process.env.FC_SEED ?? 20261126);
const noPause = async (): Promise<void> => {};

// Strings of any UTF-16 code units, long ones too, and keys such as "__proto__".
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme', minLength: 1000, maxLength: 3000 }),
  fc.constantFrom('__proto__', '"\\\n\u0000', '\ud800', 'é✓'),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    tie('list'),
    tie('object'),
  ),
  list: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(text, tie('value'), { maxKeys: 5 }),
}));
const world = fc.dictionary(text, fc.oneof(json.value, json.list), { maxKeys: 6 });

describe('a world as JSON', () => {
  it(`copies, writes and sizes any JSON value as JSON.stringify does (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(world, async (value) => {
        const expected = JSON.stringify(value);
        const copy = copyJson(value);
        expect(JSON.stringify(copy)).toBe(expected);
        const text = await worldText(value, noPause);
        expect(text.join('')).toBe(expected);
        expect(textBytes(text)).toBe(Buffer.byteLength(expected));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('copies the seed world with new objects and the same strings, and writes it in pieces of its records', async () => {
    const { seed } = seedWorld(await loadOperations(), readDocumentFile().document);
    const copy = copyJson(seed);
    expect(copy).toEqual(seed);
    expect(copy.users[0]).not.toBe(seed.users[0]);
    copy.users[0]!.login = 'changed';
    expect(seed.users[0]!.login).toBe('alice');
    const pieces = await worldText(seed, noPause);
    expect(pieces.join('')).toBe(JSON.stringify(seed));
    expect(textBytes(pieces)).toBe(Buffer.byteLength(JSON.stringify(seed)));
  });
});
