// Types of scripts/free-port.mjs, for the suites that import it.
export function freePort(): Promise<number>;
