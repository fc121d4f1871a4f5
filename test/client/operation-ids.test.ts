// The operationId lookup the client names its errors with: generated from the document as a table
// keyed by hashes, so it must give every operation its own id and no id to a path it lacks.
import { describe, expect, it } from 'vitest';
import { operationIdOf } from '../../generated/operation-ids.js';
import { listOperations, loadDocument } from '../support/mock-internals.js';

const operations = listOperations(loadDocument(new URL('../../openapi.yaml', import.meta.url)));

describe('operationIdOf', () => {
  it.each(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op.operation.operationId]))(
    '%s is %s',
    (key, id) => {
      expect(operationIdOf(key)).toBe(id);
    },
  );

  it('knows no operation the document lacks', () => {
    const known = new Set(operations.map((op) => `${op.method.toUpperCase()} ${op.path}`));
    const others = [
      'GET /version',
      'POST /admin/orgs',
      'GET /repos/{owner}/{repo}',
      'PATCH /repos/{owner}/{repo}/hooks',
      'get /admin/orgs',
      '',
      'GET /admin/orgs ',
    ];
    for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'])
      for (const op of operations) others.push(`${method} ${op.path}`, `${method} ${op.path}/x`);
    const strays = others.filter((key) => !known.has(key) && operationIdOf(key) !== undefined);
    expect(strays).toEqual([]);
  });
});
