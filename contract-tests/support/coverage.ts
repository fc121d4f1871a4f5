// Which documented responses (operation × status) the contract suites exercised.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isObject, listOperations, loadDocument } from '../../test/support/mock-internals.js';

export const doc = loadDocument(new URL('../../openapi.yaml', import.meta.url));

/** operationId → documented statuses, in the document's order of operations. */
export const documented: ReadonlyMap<string, number[]> = new Map(
  listOperations(doc).map((op) => [
    String(op.operation.operationId),
    Object.keys(isObject(op.operation.responses) ? op.operation.responses : {})
      .map(Number)
      .sort((a, b) => a - b),
  ]),
);

export const key = (operationId: string, status: number): string => `${operationId} ${status}`;

/**
 * What the global teardown prints: one line when every documented response was exercised, and the
 * table of the operations that missed one (✓ exercised, ✗ not) when some were not.
 */
export function coverageTable(exercised: ReadonlySet<string>): string {
  const statuses = [...new Set([...documented.values()].flat())].sort((a, b) => a - b);
  const width = Math.max(...[...documented.keys()].map((id) => id.length));
  const rows: string[] = [];
  let missed = 0;
  let total = 0;
  for (const [id, codes] of documented) {
    let missedHere = 0;
    const cells = statuses.map((status) => {
      if (!codes.includes(status)) return ' · ';
      total++;
      if (exercised.has(key(id, status))) return ' ✓ ';
      missedHere++;
      return ' ✗ ';
    });
    missed += missedHere;
    if (missedHere > 0) rows.push(`${id.padEnd(width)} ${cells.join(' ')}`);
  }
  const summary = `contract coverage: ${total - missed} of ${total} documented responses exercised`;
  if (missed === 0) return summary;
  return [
    `${summary}, ${missed} MISSED (✓ exercised, ✗ missed, · not documented):`,
    `${''.padEnd(width)} ${statuses.join(' ')}`,
    ...rows,
  ].join('\n');
}

/** Writes what one suite exercised where the global teardown collects it. */
export function saveCoverage(dir: string, name: string, exercised: ReadonlySet<string>): void {
  writeFileSync(join(dir, `${name}.json`), JSON.stringify([...exercised]));
}
