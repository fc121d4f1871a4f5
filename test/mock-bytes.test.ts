// The mock's byte and text helpers (mock/src/common/bytes.ts), which stand in for Node's Buffer so the
// front and the sandbox run in a browser: their portable path gives what Buffer gives, and so does
// the Buffer path they take in Node. Also the `path` stand-in of the browser build, against Node's,
// and the key of a credential on Node's hash, against the SHA-256 of TextEncoder's bytes.
import { posix } from 'node:path';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  base64Text,
  extname,
  indexOfBytes,
  keyOf,
  latin1Bytes,
  latin1Text,
  randomUuid,
  utf8Length,
} from './support/mock-internals.js';

const bytes = fc.uint8Array({ maxLength: 300 });

describe('bytes without Buffer', () => {
  it('utf8Length counts as Buffer.byteLength, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(utf8Length(text, true)).toBe(Buffer.byteLength(text));
        expect(utf8Length(text, false)).toBe(Buffer.byteLength(text));
      }),
      { numRuns: 500, seed: 28 },
    );
  });

  it("latin1Text and latin1Bytes are Buffer's latin1, every byte value included, past a slice of 32 KiB", () => {
    const all = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
    expect(latin1Text(all, true)).toBe(Buffer.from(all).toString('latin1'));
    expect(latin1Text(all.subarray(3, 9), false)).toBe(Buffer.from(all.subarray(3, 9)).toString('latin1'));
    expect([...latin1Bytes(latin1Text(all, true))]).toEqual([...all]);
  });

  it('indexOfBytes finds as Buffer.indexOf does', () => {
    fc.assert(
      fc.property(
        bytes,
        fc.uint8Array({ minLength: 1, maxLength: 4 }).map((needle) => needle.map((byte) => byte % 3)),
        fc.nat(320),
        (haystack, needle, from) => {
          const small = haystack.map((byte) => byte % 3);
          const expected = Buffer.from(small).indexOf(Buffer.from(needle), from);
          expect(indexOfBytes(small, needle, from, true)).toBe(expected);
          expect(indexOfBytes(small, needle, from, false)).toBe(expected);
        },
      ),
      { numRuns: 500, seed: 28 },
    );
  });

  it('base64Text decodes as Buffer does, and refuses what is no base64', () => {
    for (const text of ['jürgen:pässwörd✓', 'a:b', ''])
      expect(base64Text(Buffer.from(text).toString('base64'))).toBe(text);
    expect(base64Text('%%%')).toBeUndefined();
  });

  it('randomUuid makes version 4 UUIDs', () => {
    const ids = new Set(Array.from({ length: 50 }, () => randomUuid()));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('randomUuid makes them where crypto.randomUUID is missing, as on a page of an insecure origin', () => {
    const own = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(crypto), 'randomUUID')!;
    Object.defineProperty(Object.getPrototypeOf(crypto), 'randomUUID', { value: undefined, configurable: true });
    try {
      expect(typeof crypto.randomUUID).toBe('undefined');
      const ids = new Set(Array.from({ length: 50 }, () => randomUuid()));
      expect(ids.size).toBe(50);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      Object.defineProperty(Object.getPrototypeOf(crypto), 'randomUUID', own);
    }
  });

  it("the browser build's extname gives what Node's gives", () => {
    for (const path of [
      'x.json',
      'x.',
      'x',
      '.bashrc',
      '..',
      '...',
      'a/b.c/',
      'a.b/c',
      'dir/file.tar.gz',
      '/',
      '',
      'x.html//',
    ])
      expect(extname(path)).toBe(posix.extname(path));
  });
});

describe('the key of a credential', () => {
  it("keyOf, on Node's hash, is the SHA-256 of the credential's UTF-8 bytes as TextEncoder writes them, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (credential) => {
        expect(keyOf(credential)).toBe(createHash('sha256').update(new TextEncoder().encode(credential)).digest('hex'));
      }),
      { numRuns: 500, seed: 29 },
    );
  });
});
