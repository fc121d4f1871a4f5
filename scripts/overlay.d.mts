// Types of scripts/overlay.mjs, for the suites that import it.

/** A key path into a JSON document: member names and array indexes. */
export type KeyPath = (string | number)[];

/** The key paths a JSONPath target selects in `doc`, each once; throws on syntax outside the subset read. */
export function selectPaths(doc: unknown, target: string): KeyPath[];

/** Applies an Overlay 1.0.0 document to a copy of `doc`, as Redocly's `bundle --overlay` does; `matches[i]` is what action i selected. */
export function applyOverlay<T>(doc: T, overlay: { actions: object[] }): { document: T; matches: KeyPath[][] };
