// What the package's build writes to dist/document.json for the document it ships: the parsed
// document and its operations in IHttpOperation shape, keyed by the SHA-256 of the YAML text they
// come from (document-file.ts reads it). Everything in it is what a start would compute itself.
import { createHash } from 'node:crypto';
import type { IHttpOperation } from '@stoplight/types';
import { parse } from 'yaml';
import { httpOperations } from './http-operations.js';
import type { JsonObject } from './document.js';

export interface DocumentTwin {
  sha256: string;
  document: JsonObject;
  operations: IHttpOperation[];
}

/** The twin of a document's YAML text, as JSON. */
export function documentTwin(text: string): string {
  const document = parse(text, { maxAliasCount: -1 }) as JsonObject;
  const twin: DocumentTwin = {
    sha256: createHash('sha256').update(text).digest('hex'),
    document,
    operations: httpOperations(document),
  };
  return JSON.stringify(twin);
}
