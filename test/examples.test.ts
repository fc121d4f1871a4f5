// Every example in openapi.yaml must validate against the schema it illustrates, and every request
// and response media type must carry at least one named example (the mock serves them and the
// docs show them). One test per operation, plus one for the shared components.
import { describe, expect, it } from 'vitest';
import { listOperations, listWebhooks, tryLoadDocument } from './support/mock-internals.js';
import { exampleChecks } from './support/examples.js';

const loaded = tryLoadDocument(new URL('../openapi.yaml', import.meta.url));
const doc = loaded.doc;
const checks = exampleChecks(doc);

// ---------------------------------------------------------------- tests

function report(list: string[]): string[] {
  if (loaded.error !== undefined) return [`openapi.yaml could not be loaded: ${loaded.error}`];
  if (checks.error !== undefined) return [checks.error];
  return list;
}

describe('examples in openapi.yaml', () => {
  for (const op of listOperations(doc)) {
    const name =
      typeof op.operation.operationId === 'string' ? op.operation.operationId : `${op.method.toUpperCase()} ${op.path}`;
    it(name, () => {
      expect(report(checks.operation(op))).toEqual([]);
    });
  }

  for (const op of listWebhooks(doc)) {
    it(`webhook ${op.path}`, () => {
      expect(report(checks.operation(op, true))).toEqual([]);
    });
  }

  it('shared components', () => {
    expect(report(checks.components())).toEqual([]);
  });
});
