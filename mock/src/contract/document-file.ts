// The one way to load a document in Node, each text parsed once; the shipped ones' twins are prebuilt (document.json, profiles/).
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { IHttpOperation } from '@stoplight/types';
import { SERVER_PROFILES, type ServerProfile } from 'gitea-contract';
import { isObject, type JsonObject } from './document.js';

const require = createRequire(import.meta.url);

/** The contract: the openapi.yaml of the gitea-contract package this package depends on. */
export const DOCUMENT = require.resolve('gitea-contract/openapi.yaml');

/** This package's folder, by its own name: the same from src/ (the suites) and from dist/ (users). */
const packageRoot = (): string => dirname(require.resolve('gitea-mock/package.json'));

/** The profile the base document is (openapi.yaml, Gitea at f26f71f1b2). */
export const BASE_PROFILE: ServerProfile = 'gitea-1.27';

/** The document of the server profile `server`, built into this package as dist/profiles/<server>.json. */
export function profileDocument(server: ServerProfile): string {
  if (!SERVER_PROFILES.includes(server))
    throw new TypeError(`server must be one of ${SERVER_PROFILES.join(', ')}, not ${JSON.stringify(server)}`);
  return join(packageRoot(), 'dist/profiles', `${server}.json`);
}

export interface DocumentFile {
  document: JsonObject;
  /** The operations in Stoplight's shape, where the build made them for this text. */
  operations?: IHttpOperation[];
  /** The SHA-256 of the text, hex: equal texts share everything made from them. */
  sha256: string;
}

type DocumentTwin = Required<DocumentFile>;
type OperationsTwin = Omit<DocumentTwin, 'document'>;

const byText = new Map<string, DocumentFile>();
const operationsByText = new Map<string, Promise<IHttpOperation[]>>();
let twin: DocumentTwin | null | undefined;

/** YAML (or JSON) text as a document, loading the parser only then; no alias-expansion cap (examples share anchors). */
function parseYaml(text: string, prettyErrors: boolean): unknown {
  return (require('yaml') as typeof import('yaml')).parse(text, { prettyErrors, maxAliasCount: -1 });
}

/** JSON by JSON.parse, two hundred times faster than the YAML parser on a profile; YAML, or JSON it refuses, by the YAML parser. */
function parseDocument(text: string): unknown {
  if (/^\s*\{/.test(text))
    try {
      return JSON.parse(text);
    } catch {
      // The YAML parser says where it breaks.
    }
  return parseYaml(text, true);
}

/** The operations the build made for a JSON document beside it (`<name>.operations.json`, the profiles'), if for this text. */
function operationsBeside(path: string, sha256: string): IHttpOperation[] | undefined {
  if (!path.endsWith('.json')) return undefined;
  try {
    const made = JSON.parse(readFileSync(`${path.slice(0, -5)}.operations.json`, 'utf8')) as OperationsTwin;
    return made.sha256 === sha256 ? made.operations : undefined;
  } catch {
    return undefined;
  }
}

/** What `make` returns, or an Error saying what failed (`failed`) and why. */
function attempt<T>(failed: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new Error(`${failed}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The document in the file at `path` (YAML or JSON), parsed once per distinct text; throws an Error naming the file. */
export function readDocumentFile(path: string = DOCUMENT): DocumentFile {
  const text = attempt(`cannot read the document ${path}`, () => readFileSync(path, 'utf8'));
  const sha256 = hash('sha256', text);
  const known = byText.get(sha256);
  if (known) return known;
  // None before a build.
  if (twin === undefined) {
    try {
      twin = JSON.parse(readFileSync(join(packageRoot(), 'dist/document.json'), 'utf8')) as DocumentTwin;
    } catch {
      twin = null;
    }
  }
  let file: DocumentFile;
  if (twin?.sha256 === sha256) file = twin;
  else {
    const document = attempt(`cannot parse ${path}`, () => parseDocument(text));
    if (!isObject(document)) throw new Error(`${path} is not an OpenAPI document (not a YAML mapping)`);
    const operations = operationsBeside(path, sha256);
    file = { document, sha256, ...(operations ? { operations } : {}) };
  }
  byText.set(sha256, file);
  return file;
}

/** The operations of a document given as data; the transform (http-spec and lodash) loads only for a document not twinned. */
export async function operationsOf(document: Record<string, unknown>): Promise<IHttpOperation[]> {
  return (await import('./http-operations.js')).httpOperations(document);
}

export function loadOperations(path: string = DOCUMENT): Promise<IHttpOperation[]> {
  const { document, operations, sha256 } = readDocumentFile(path);
  if (operations) return Promise.resolve(operations);
  return operationsByText.get(sha256) ?? operationsByText.set(sha256, operationsOf(document)).get(sha256)!;
}

/** The build's twin of a document's YAML text, as JSON: everything in it is what a start would make itself. */
export async function documentTwin(text: string): Promise<string> {
  const document = parseYaml(text, false) as JsonObject;
  const made: DocumentTwin = { sha256: hash('sha256', text), document, operations: await operationsOf(document) };
  return JSON.stringify(made);
}

/** The build's twin of a JSON document's text (`<name>.operations.json` beside it): the operations a start would make. */
export async function operationsTwin(text: string): Promise<string> {
  const made: OperationsTwin = { sha256: hash('sha256', text), operations: await operationsOf(JSON.parse(text)) };
  return JSON.stringify(made);
}
