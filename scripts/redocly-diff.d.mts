// Types of scripts/redocly-diff.mjs, for the tests that import it.
import type { DiffChange } from './breaking-policy.mjs';

/** redocly diff's JSON report on `baseText` against `revisionText`; rejects when it fails. */
export function redoclyDiff(baseText: string, revisionText: string): Promise<{ changes?: DiffChange[] }>;
