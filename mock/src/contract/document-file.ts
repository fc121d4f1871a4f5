// The one way to load a document in Node, each text parsed once; the shipped one's twin is prebuilt (document.json).
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { IHttpOperation } from '@stoplight/types';
import { isObject, type JsonObject } from './document.js';

const require = createRequire(import.meta.url);

/** The contract: the openapi.yaml of the gitea-contract package this package depends on. */
export const DOCUMENT = require.resolve('gitea-contract/openapi.yaml');

export interface DocumentFile {
  document: JsonObject;
  /** The operations in Stoplight's shape, where the build made them for this text. */
  operations?: IHttpOperation[];
  /** The SHA-256 of the text, hex: equal texts share everything made from them. */
  sha256: string;
}

type DocumentTwin = Required<DocumentFile>;

const byText = new Map<string, DocumentFile>();
const operationsByText = new Map<string, Promise<IHttpOperation[]>>();
let twin: DocumentTwin | null | undefined;

/** YAML (or JSON) text as a document, loading the parser only then; no alias-expansion cap (examples share anchors). */
function parseYaml(text: string, prettyErrors: boolean): unknown {
  return (require('yaml') as typeof import('yaml')).parse(text, { prettyErrors, maxAliasCount: -1 });
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
  // By the package's own name: the same file from src/ (the suites) and from dist/ (users); none before a build.
  if (twin === undefined) {
    try {
      const root = dirname(require.resolve('gitea-mock/package.json'));
      twin = JSON.parse(readFileSync(join(root, 'dist/document.json'), 'utf8')) as DocumentTwin;
    } catch {
      twin = null;
    }
  }
  let file: DocumentFile;
  if (twin?.sha256 === sha256) file = twin;
  else {
    const document = attempt(`cannot parse ${path}`, () => parseYaml(text, true));
    if (!isObject(document)) throw new Error(`${path} is not an OpenAPI document (not a YAML mapping)`);
    file = { document, sha256 };
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
