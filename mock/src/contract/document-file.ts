// The Node side's one way to read an OpenAPI document file: the server, the proxy, live mode and
// the sandbox's state check all need it, and parsing the 200 KB of YAML takes most of half a
// second, the operation table as long again. So each text is parsed once per process, and the
// package's build writes both for the document it ships (dist/document.json, see document-twin.ts):
// a start with that document reads JSON instead. The twin is keyed by the SHA-256 of the YAML
// text, so an edited document, or another one, is parsed as before and never served stale.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { IHttpOperation } from '@stoplight/types';
import type { JsonObject } from './document.js';
import type { DocumentTwin } from './document-twin.js';

export interface DocumentFile {
  document: JsonObject;
  /** The operation table's raw material, when the build made it for this text. */
  operations?: IHttpOperation[];
  /** The SHA-256 of the text, hex: equal texts share everything made from them. */
  sha256: string;
}

const byText = new Map<string, DocumentFile>();
let twin: DocumentTwin | null | undefined;

/** The build's twin of the packaged document, or null where there is none (tests from source before a build). */
function builtTwin(): DocumentTwin | null {
  if (twin !== undefined) return twin;
  try {
    // By the package's own name: the same file from src/ (the suites) and from dist/ (users).
    const root = dirname(createRequire(import.meta.url).resolve('gitea-mock/package.json'));
    twin = JSON.parse(readFileSync(join(root, 'dist/document.json'), 'utf8')) as DocumentTwin;
  } catch {
    twin = null;
  }
  return twin;
}

/**
 * The document in the file at `path` (YAML or JSON), parsed once per distinct text. Throws an
 * Error naming the file when it cannot be read or is no mapping.
 */
export function readDocumentFile(path: string): DocumentFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the document ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const sha256 = createHash('sha256').update(text).digest('hex');
  const known = byText.get(sha256);
  if (known) return known;
  const built = builtTwin();
  let file: DocumentFile;
  if (built?.sha256 === sha256) {
    file = { document: built.document, operations: built.operations, sha256 };
  } else {
    let document: unknown;
    try {
      // Loaded here only: a start with the built twin needs no YAML parser. The document shares
      // example objects through YAML anchors: no alias-expansion cap.
      const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
      document = parse(text, { prettyErrors: true, maxAliasCount: -1 });
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
