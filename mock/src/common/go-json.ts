// JSON text as the server's Go encoder writes it. Gitea 1.26 on builds with encoding/json/v2 (its Makefile's
// `GOEXPERIMENT ?= jsonv2`), which escapes nothing JSON does not require, as JSON.stringify does. Gitea before
// 1.26 and Forgejo encode with json-iterator's standard-library configuration (modules/json/json.go), which
// writes `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`, `\u003e`, `\u0026`, `\u2028` and `\u2029`.

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** `json` (JSON text) with the characters json-iterator escapes escaped: they stand only inside strings. */
export const htmlEscaped = (json: string): string => json.replace(HTML_UNSAFE, (char) => ESCAPES[char]!);
