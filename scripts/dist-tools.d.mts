// Types of scripts/dist-tools.mjs, for the tests that import it.

/** The folder whose lockfile pins the tools of `npm run test:dist` and whose node_modules holds them. */
export declare const DIST_TOOLS: string;

/** `require.resolve` and friends from the tools' folder. */
export declare const distToolsRequire: NodeJS.Require;

/** Installs the tools unless the lockfile's are there already; once per process. Rejects saying why it could not. */
export function installDistTools(): Promise<void>;
