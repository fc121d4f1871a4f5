// The sandbox's world as JSON (mock/src/sandbox/world-json.ts): its copy, its text in pieces and
// its size must each agree with JSON.stringify, for any JSON value and for the seed world, with odd
// strings (escapes, lone surrogates, "__proto__" keys) included, before and after a copy's unchanged
// parts are given back.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  copyJson,
  loadOperations,
  readChanges,
  readDocumentFile,
  keepUnchanged,
  seedWorld,
  worldBytes,
  worldChange,
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
        expect(await worldBytes(value, noPause)).toBe(Buffer.byteLength(expected));
        // Given back whatever is the same: all of it, and the text and size stay.
        await keepUnchanged(copy, value, noPause);
        expect(JSON.stringify(copy)).toBe(expected);
        expect(await worldBytes(copy, noPause)).toBe(Buffer.byteLength(expected));
        for (const [key, field] of Object.entries(copy))
          if (Array.isArray(field))
            for (const [index, entry] of field.entries()) expect(entry).toBe((value[key] as unknown[])[index]);
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
    expect(await worldBytes(seed, noPause)).toBe(Buffer.byteLength(JSON.stringify(seed)));
  });

  it('tells only what a copy changed, once its unchanged entries are given back', async () => {
    const { seed } = seedWorld(await loadOperations(), readDocumentFile().document);
    const bytes = Buffer.byteLength(JSON.stringify(seed));
    const same = copyJson(seed);
    await keepUnchanged(same, seed, noPause);
    expect(same.users[0]).toBe(seed.users[0]);
    expect(worldChange(seed, same, bytes)).toBe(`{"bytes":${bytes},"fields":{},"lists":{}}`);
    const renamed = copyJson(seed);
    renamed.orgLabels[0]!.label.name = 'renamed';
    await keepUnchanged(renamed, seed, noPause);
    expect(renamed.orgLabels[1]).toBe(seed.orgLabels[1]);
    const entry = JSON.stringify(renamed.orgLabels[0]);
    expect(worldChange(seed, renamed, 1)).toBe(
      `{"bytes":1,"fields":{},"lists":{"orgLabels":[${renamed.orgLabels.length},[0,${entry}]]}}`,
    );
  });
});

describe("a world's changes, as a shared store sends them", () => {
  /** An edit of the seed world the sandbox could make: a label renamed, entries removed from a list's end, one added. */
  const edit = fc.record({
    label: fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: undefined }),
    dropHooks: fc.nat({ max: 3 }),
    addIssue: fc.boolean(),
    nextId: fc.nat({ max: 1000 }),
  });

  it(`applies what changed, as the writer's world, checking only the changed records (seed ${SEED})`, async () => {
    const { seed } = seedWorld(await loadOperations(), readDocumentFile().document);
    const held = { world: seed, bytes: Buffer.byteLength(JSON.stringify(seed)) };
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 4 }), async (edits) => {
        let before = held;
        const changes: string[] = [];
        for (const { label, dropHooks, addIssue, nextId } of edits) {
          const next = copyJson(before.world);
          if (label !== undefined && next.orgLabels[0]) next.orgLabels[0].label.name = label;
          next.hooks.splice(Math.max(0, next.hooks.length - dropHooks));
          next.nextId += nextId;
          if (addIssue)
            next.issues.push({ ...next.issues[0]!, issue: { ...next.issues[0]!.issue, id: next.nextId++ } });
          await keepUnchanged(next, before.world, noPause);
          const bytes = await worldBytes(next, noPause);
          expect(bytes).toBe(Buffer.byteLength(JSON.stringify(next)));
          changes.push(worldChange(before.world, next, bytes));
          before = { world: next, bytes };
        }
        const read = readChanges(held, changes);
        expect(read).toEqual(before);
      }),
      { seed: SEED, numRuns: 50 },
    );
  });

  it('refuses a change the sandbox did not write, naming what is wrong', async () => {
    const { seed } = seedWorld(await loadOperations(), readDocumentFile().document);
    const held = { world: seed, bytes: 1 };
    const change = (lists: string, fields = '{}') => `{"bytes":10,"fields":${fields},"lists":${lists}}`;
    expect(readChanges(held, ['{'])).toEqual({});
    expect(readChanges(held, [change('{"users":[3,[1,{"id":2,"login":5}]]}')])).toEqual({
      problem: 'users[1] is not a User: /login must be string',
    });
    expect(readChanges(held, [change('{}', '{"__proto__":{"polluted":true}}')])).toEqual({
      problem: 'a change of it sets __proto__, which is not a field of a world',
    });
    expect(readChanges(held, [change('{"hooks":[99]}')])).toEqual({
      problem: 'a change of it to hooks is not one the sandbox wrote',
    });
    expect(readChanges(held, [change('{}', '{"nextId":1}')])).toEqual({
      problem: `nextId went down from ${seed.nextId} to 1`,
    });
    const fresh = seed.nextId;
    expect(
      readChanges(held, [
        change(
          `{"repoLabels":[1,[0,{"repo":1,"label":{"id":${fresh},"name":"x","color":"ffffff","exclusive":false}}]]}`,
        ),
      ]),
    ).toMatchObject({
      problem: `nextId is ${fresh}, not above the ids in use (${fresh}, at repoLabels[0].label.id)`,
    });
  });
});
