// A Content-Type read as the WHATWG MIME Sniffing standard's "parse a MIME type" reads it, which
// is what Node's util.MIMEType implements: the front decides with it whether a header is a media
// type at all (`garbage` is not) and finds a multipart body's boundary. Written out here so the
// front imports no Node built-in (the MSW handlers run it in browsers too);
// test/media-type.test.ts holds it to Node's MIMEType on generated headers.

export interface MediaType {
  /** `type/subtype`, lower-cased. */
  essence: string;
  /** Parameters by lower-cased name; the first of a name wins. */
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Code points a parameter value may hold (HTTP quoted-string token code points). */
const QUOTED = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
const WHITESPACE = '\t\n\r ';

const isWhitespace = (c: string | undefined): boolean => c !== undefined && c !== '' && WHITESPACE.includes(c);

function trimWhitespace(text: string, start = true): string {
  let from = 0;
  let to = text.length;
  if (start) while (from < to && isWhitespace(text[from])) from++;
  while (to > from && isWhitespace(text[to - 1])) to--;
  return text.slice(from, to);
}

/** The media type of a Content-Type header, or undefined when the header is none. */
export function parseMediaType(header: string): MediaType | undefined {
  const input = trimWhitespace(header);
  const slash = input.indexOf('/');
  if (slash <= 0) return undefined;
  const type = input.slice(0, slash);
  if (!TOKEN.test(type)) return undefined;
  let position = input.indexOf(';', slash + 1);
  if (position < 0) position = input.length;
  const subtype = trimWhitespace(input.slice(slash + 1, position), false);
  if (!TOKEN.test(subtype)) return undefined;
  const params = new Map<string, string>();

  while (position < input.length) {
    position++; // the `;`
    while (isWhitespace(input[position])) position++;
    let nameEnd = position;
    while (nameEnd < input.length && input[nameEnd] !== ';' && input[nameEnd] !== '=') nameEnd++;
    const name = input.slice(position, nameEnd).toLowerCase();
    position = nameEnd;
    if (position < input.length) {
      if (input[position] === ';') continue;
      position++; // the `=`
    }
    if (position >= input.length) break;
    let value: string;
    if (input[position] === '"') {
      // A quoted string: a backslash takes the next code point as it is.
      value = '';
      position++;
      for (;;) {
        let end = position;
        while (end < input.length && input[end] !== '"' && input[end] !== '\\') end++;
        value += input.slice(position, end);
        position = end;
        if (position >= input.length) break;
        const quoteOrBackslash = input[position];
        position++;
        if (quoteOrBackslash === '\\') {
          if (position >= input.length) {
            value += '\\';
            break;
          }
          value += input[position];
          position++;
        } else break;
      }
      while (position < input.length && input[position] !== ';') position++;
    } else {
      let end = position;
      while (end < input.length && input[end] !== ';') end++;
      value = trimWhitespace(input.slice(position, end), false);
      position = end;
      if (value === '') continue;
    }
    if (name !== '' && TOKEN.test(name) && QUOTED.test(value) && !params.has(name)) params.set(name, value);
  }
  return { essence: `${type}/${subtype}`.toLowerCase(), params };
}
