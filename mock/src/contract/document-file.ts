// The one way to load an OpenAPI document on the Node side: the server, the proxy, live mode, the
// webhook receiver, the sandbox's state check and the suites read it here. Parsing the YAML and
// making the operation table are most of a start, so each text is parsed once per process and its
// table made once; for the document the package ships, the build writes both beforehand
// (dist/document.json, `documentTwin`), and a start with that document reads JSON instead. The twin is keyed by the SHA-256 of the YAML text, so an edited document, or another
// one, is parsed as any other and never served stale.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IHttpOperation } from '@stoplight/types';
import type { JsonObject } from './document.js';

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

/** What the build writes to dist/document.json for the document it ships. */
interface DocumentTwin {
  sha256: string;
  document: JsonObject;
  operations: IHttpOperation[];
}

const byText = new Map<string, DocumentFile>();
const operationsByText = new Map<string, Promise<IHttpOperation[]>>();
let twin: DocumentTwin | null | undefined;

const sha256Of = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The build's twin of the packaged document, or null where there is none (the suites from source before a build). */
function builtTwin(): DocumentTwin | null {
  if (twin !== undefined) return twin;
  try {
    // By the package's own name: the same file from src/ (the suites) and from dist/ (users).
    const root = dirname(require.resolve('gitea-mock/package.json'));
    twin = JSON.parse(readFileSync(join(root, 'dist/document.json'), 'utf8')) as DocumentTwin;
  } catch {
    twin = null;
  }
  return twin;
}

/** YAML (or JSON) text as a document. The document shares example objects through YAML anchors: no alias-expansion cap. */
function parseYaml(text: string, prettyErrors: boolean): unknown {
  // Loaded here only: a start with the built twin needs no YAML parser.
  const { parse } = require('yaml') as typeof import('yaml');
  return parse(text, { prettyErrors, maxAliasCount: -1 });
}

/**
 * The document in the file at `path` (YAML or JSON), parsed once per distinct text. Throws an
 * Error naming the file when it cannot be read or is no mapping.
 */
export function readDocumentFile(path: string = DOCUMENT): DocumentFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the document ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const sha256 = sha256Of(text);
  const known = byText.get(sha256);
  if (known) return known;
  const built = builtTwin();
  let file: DocumentFile;
  if (built?.sha256 === sha256) {
    file = { document: built.document, operations: built.operations, sha256 };
  } else {
    let document: unknown;
    try {
      document = parseYaml(text, true);
    } catch (error) {
      throw new Error(`cannot parse ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      throw new Error(`${path} is not an OpenAPI document (not a YAML mapping)`);
    file = { document: document as JsonObject, sha256 };
  }
  byText.set(sha256, file);
  return file;
}

/**
 * The operations of a document given as data, in Stoplight's shape. The transform (http-spec and
 * its share of lodash) loads only for a document the build did not twin.
 */
export async function operationsOf(document: Record<string, unknown>): Promise<IHttpOperation[]> {
  const { httpOperations } = await import('./http-operations.js');
  return httpOperations(document);
}

/** The operations of the document at `path`, in Stoplight's shape, made once per distinct text. */
export function loadOperations(path: string = DOCUMENT): Promise<IHttpOperation[]> {
  const file = readDocumentFile(path);
  if (file.operations) return Promise.resolve(file.operations);
  let operations = operationsByText.get(file.sha256);
  if (!operations) {
    operations = operationsOf(file.document);
    operationsByText.set(file.sha256, operations);
  }
  return operations;
}

/**
 * The document in a file, as a copy of its own to change at will. Throws an Error that names the
 * file when it is missing or malformed.
 */
export function loadDocument(url: URL): JsonObject {
  return structuredClone(readDocumentFile(fileURLToPath(url)).document);
}

/**
 * The document for a test file: a load failure is returned, not thrown, so each test can report
 * it instead of the whole file failing to collect.
 */
export function tryLoadDocument(url: URL): { doc: JsonObject; error?: string } {
  try {
    return { doc: loadDocument(url) };
  } catch (error) {
    return { doc: {}, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The build's twin of a document's YAML text, as JSON: everything in it is what a start would make itself. */
export async function documentTwin(text: string): Promise<string> {
  const document = parseYaml(text, false) as JsonObject;
  const made: DocumentTwin = { sha256: sha256Of(text), document, operations: await operationsOf(document) };
  return JSON.stringify(made);
}
