// Reads JUnit XML as CI systems do (GitHub's and GitLab's test reports, Jenkins' JUnit plugin),
// and throws, naming what is wrong, where it would not be read as written: XML that is not
// well-formed or holds a character XML forbids, a root other than <testsuites>, counts that do not
// match the test cases, a test case without a name or with an element JUnit does not know.
// `schemaProblems` checks the structure as the strictest of them does (Jenkins' xUnit plugin
// validates against its junit-10.xsd): against junit.xsd beside this file, with libxml2.
import { readFileSync } from 'node:fs';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';

const SCHEMA = { fileName: 'junit.xsd', contents: readFileSync(new URL('junit.xsd', import.meta.url), 'utf8') };

/**
 * What breaks the schema in each of `files` (file name and XML), as libxml2 says it
 * (`Element 'testsuites', attribute 'skipped': The attribute 'skipped' is not allowed.`); none
 * when each is valid. One call for all: each call starts a worker and compiles the WebAssembly.
 */
export async function schemaProblems(files: { fileName: string; contents: string }[]): Promise<string[]> {
  const { valid, errors } = await validateXML({ xml: files, schema: [SCHEMA] });
  const messages = errors.map(({ rawMessage }) => rawMessage);
  // Each invalid file also gets a summary line (`x.xml fails to validate`), kept only when alone.
  const specific = messages.filter((message) => !/ fails to validate$/.test(message));
  return valid
    ? []
    : specific.length > 0
      ? specific
      : messages.length > 0
        ? messages
        : ['invalid, and libxml2 said nothing'];
}

export interface JUnitCase {
  classname: string;
  name: string;
  time: number;
  failures: { message: string; type: string; text: string }[];
  errors: { message: string; type: string }[];
  /** The skip's message, when the test case was skipped. */
  skipped: string | undefined;
  systemOut: string | undefined;
}

export interface JUnitSuite {
  name: string;
  timestamp: string;
  properties: Record<string, string>;
  cases: JUnitCase[];
}

type Node = Record<string, unknown>;

const LISTS = new Set(['testsuite', 'properties', 'property', 'testcase', 'failure', 'error', 'skipped', 'system-out']);
const CASE_CHILDREN = new Set(['failure', 'error', 'skipped', 'system-out', 'system-err']);
/** Anything outside XML 1.0's `Char` production. */
const FORBIDDEN = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function fail(problem: string): never {
  throw new Error(`not JUnit XML as CI systems read it: ${problem}`);
}

function text(node: unknown): string {
  if (typeof node === 'string') return node;
  const value = (node as Node | undefined)?.['#text'];
  return typeof value === 'string' ? value : '';
}

function count(node: Node, name: string, where: string): number {
  const value = node[name];
  if (typeof value !== 'string' || !/^\d+$/.test(value)) fail(`${where} has ${name}="${String(value)}", not a count`);
  return Number(value);
}

function seconds(node: Node, where: string): number {
  const value = node.time;
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value))
    fail(`${where} has time="${String(value)}", not seconds`);
  return Number(value);
}

function list(node: Node, name: string): Node[] {
  const value = node[name];
  return value === undefined
    ? []
    : (value as unknown[]).map((item) =>
        typeof item === 'object' && item !== null ? (item as Node) : { '#text': item },
      );
}

function readCase(node: Node, where: string): JUnitCase {
  for (const key of Object.keys(node))
    if (!['classname', 'name', 'time', '#text'].includes(key) && !CASE_CHILDREN.has(key))
      fail(`${where} holds <${key}> or ${key}="…", which JUnit does not know`);
  if (typeof node.name !== 'string' || node.name === '') fail(`${where} has no name`);
  if (typeof node.classname !== 'string' || node.classname === '') fail(`${where} (${node.name}) has no classname`);
  const failures = list(node, 'failure').map((failure) => {
    if (typeof failure.message !== 'string' || typeof failure.type !== 'string')
      fail(`a <failure> of ${node.name} lacks its message or type`);
    return { message: failure.message, type: failure.type, text: text(failure) };
  });
  const errors = list(node, 'error').map((error) => ({
    message: String(error.message ?? ''),
    type: String(error.type ?? ''),
  }));
  const skips = list(node, 'skipped');
  if (skips.length > 1) fail(`${node.name} is skipped twice`);
  if (skips.length === 1 && failures.length + errors.length > 0) fail(`${node.name} is skipped and failed at once`);
  return {
    classname: node.classname,
    name: node.name,
    time: seconds(node, `test case ${node.name}`),
    failures,
    errors,
    skipped: skips.length === 1 ? String(skips[0]!.message ?? '') : undefined,
    systemOut: list(node, 'system-out').map(text)[0],
  };
}

/**
 * `xml` with its attribute values as XML parsers hand them over (3.3.3, attribute-value
 * normalization: a literal tab, line break or carriage return becomes a space), which
 * fast-xml-parser skips; and a raw `<` in one refused (AttValue forbids it), which its validator
 * lets pass. A scan of the tags, minding quotes.
 */
function normaliseAttributes(xml: string): string {
  let out = '';
  let quote: string | undefined;
  let inTag = false;
  for (let at = 0; at < xml.length; at++) {
    let char = xml[at]!;
    if (!inTag) inTag = char === '<';
    else if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '<') fail(`an attribute value holds a raw "<" (offset ${at})`);
      else if (char === '\t' || char === '\n' || char === '\r') char = ' ';
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '>') inTag = false;
    out += char;
  }
  return out;
}

/** The test suites of `xml`, checked as CI systems read them. */
export function readJUnit(xml: string): JUnitSuite[] {
  const forbidden = FORBIDDEN.exec(xml);
  if (forbidden) fail(`it holds U+${forbidden[0].codePointAt(0)!.toString(16).padStart(4, '0')}, which XML forbids`);
  const valid = XMLValidator.validate(xml);
  if (valid !== true) fail(`${valid.err.msg} (line ${valid.err.line})`);

  if (!xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')) fail('no XML declaration of UTF-8');
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    htmlEntities: true,
    trimValues: false,
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name, _path, _leaf, attribute) => !attribute && LISTS.has(name),
  });
  const document = parser.parse(normaliseAttributes(xml)) as Node;
  const roots = Object.keys(document).filter((key) => key !== '?xml' && key !== '#text');
  if (roots.length !== 1 || roots[0] !== 'testsuites')
    fail(`the root is ${roots.map((root) => `<${root}>`).join(', ')}, not <testsuites>`);
  const root = document.testsuites as Node;
  const suites = list(root, 'testsuite');
  if (suites.length === 0) fail('<testsuites> holds no <testsuite>');
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const read = suites.map((suite, index) => {
    const where = `testsuite ${index + 1}`;
    if (typeof suite.name !== 'string' || suite.name === '') fail(`${where} has no name`);
    if (typeof suite.timestamp !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(suite.timestamp))
      fail(`${where} has timestamp="${String(suite.timestamp)}", not a JUnit date and time`);
    seconds(suite, where);
    const cases = list(suite, 'testcase').map((node, at) => readCase(node, `test case ${at + 1} of ${where}`));
    const counted = {
      tests: cases.length,
      failures: cases.filter((testCase) => testCase.failures.length > 0).length,
      errors: cases.filter((testCase) => testCase.errors.length > 0).length,
      skipped: cases.filter((testCase) => testCase.skipped !== undefined).length,
    };
    for (const [name, value] of Object.entries(counted)) {
      const said = count(suite, name, where);
      if (said !== value) fail(`${where} says ${name}="${said}", but its test cases make ${value}`);
      totals[name as keyof typeof totals] += value;
    }
    const properties = Object.fromEntries(
      list(list(suite, 'properties')[0] ?? {}, 'property').map((property) => [
        String(property.name),
        String(property.value),
      ]),
    );
    return { name: suite.name, timestamp: suite.timestamp, properties, cases };
  });
  for (const [name, value] of Object.entries(totals))
    if (root[name] !== undefined && count(root, name, '<testsuites>') !== value)
      fail(`<testsuites> says ${name}="${String(root[name])}", but its suites make ${value}`);
  return read;
}
