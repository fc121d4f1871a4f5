// The front's media-type reader (mock/src/front/body.ts, portable for the browser build)
// against Node's util.MIMEType, which implements the same WHATWG algorithm: the same headers are
// media types, with the same essence and the same parameters.
import { MIMEType } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMediaType } from './support/mock-internals.js';

function nodes(header: string): { essence: string; params: [string, string][] } | undefined {
  try {
    const mime = new MIMEType(header);
    return { essence: mime.essence, params: [...mime.params] };
  } catch {
    return undefined;
  }
}

function ours(header: string): { essence: string; params: [string, string][] } | undefined {
  const mime = parseMediaType(header);
  return mime && { essence: mime.essence, params: [...mime.params] };
}

/** Headers built from the characters that matter to the algorithm, so most cases are near a boundary. */
const header = fc
  .array(
    fc.constantFrom(
      'multipart',
      'form-data',
      'JSON',
      'a',
      '/',
      ';',
      '=',
      '"',
      '\\',
      ' ',
      '\t',
      '\n',
      'boundary',
      'charset',
      'x',
      'é',
      '€',
      '(',
      '@',
      '',
    ),
    { maxLength: 14 },
  )
  .map((pieces) => pieces.join(''));

describe('parseMediaType', () => {
  it.each([
    'application/json',
    'application/json;charset=utf-8',
    ' Multipart/Form-Data ; boundary="a\\"b" ; boundary=second',
    'multipart/form-data; boundary=----x',
    'text/plain; charset',
    'text/plain; =x; a="unterminated',
    'garbage',
    'a, b',
    '/json',
    'text/',
    'text/plain;',
    'text/plain ; charset = utf-8',
    'text/plain;charset="\\',
  ])('reads %j as Node does', (value) => {
    expect(ours(value)).toEqual(nodes(value));
  });

  it('reads 3,000 generated headers as Node does', () => {
    fc.assert(
      fc.property(header, (value) => {
        expect(ours(value)).toEqual(nodes(value));
      }),
      { numRuns: 3_000, seed: 28 },
    );
  });
});
