// Which documented responses (operation × status) the contract suites exercised.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isObject, listOperations } from '../../mock/src/contract/document.js';
import { loadDocument } from '../../mock/src/contract/document-file.js';

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

/** The table the global teardown prints: one row per operation, ✓ exercised, ✗ not. */
export function coverageTable(exercised: ReadonlySet<string>): string {
  const statuses = [...new Set([...documented.values()].flat())].sort((a, b) => a - b);
  const width = Math.max(...[...documented.keys()].map((id) => id.length));
  const lines = [
    `\ncontract coverage: operation × documented status (✓ exercised, ✗ missed, · not documented)`,
    `${''.padEnd(width)} ${statuses.join(' ')}`,
  ];
  let missed = 0;
  let total = 0;
  for (const [id, codes] of documented) {
    const cells = statuses.map((status) => {
      if (!codes.includes(status)) return ' · ';
      total++;
      if (exercised.has(key(id, status))) return ' ✓ ';
      missed++;
      return ' ✗ ';
    });
    lines.push(`${id.padEnd(width)} ${cells.join(' ')}`);
  }
  lines.push(`${total - missed} of ${total} documented responses exercised${missed ? `, ${missed} MISSED` : ''}`);
  return lines.join('\n');
}

/** Writes what one suite exercised where the global teardown collects it. */
export function saveCoverage(dir: string, name: string, exercised: ReadonlySet<string>): void {
  writeFileSync(join(dir, `${name}.json`), JSON.stringify([...exercised]));
}
