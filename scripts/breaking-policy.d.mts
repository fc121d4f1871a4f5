// Types of scripts/breaking-policy.mjs, for the tests that import it.

/** One change of `redocly diff --format json`, as far as the policy reads it. */
export interface DiffChange {
  impact?: string;
  path?: string;
  base?: { pointer?: string } | null;
  revision?: { pointer?: string } | null;
  verdicts?: { impact?: string; message?: string; ruleId?: string }[];
}

export interface PolicyInput {
  changes: DiffChange[];
  /** The document parsed at the base and now. */
  docs: { base: unknown; revision: unknown };
  /** The base's short commit, for the lines. */
  baseCommit: string;
  /** The package's version at the base and now. */
  versions: { base: string | undefined; current: string | undefined };
  /** CHANGELOG.md's text at the base ('' where it was not) and now. */
  changelogs: { base: string; current: string };
}

/** The verdict: exit code 0 (nothing breaks, or each breaking change is allowed) or 1, and the lines that say it. */
export function judgeChanges(input: PolicyInput): { code: 0 | 1; lines: string[] };

/** Whether `text` names `name` as a whole (not inside a longer name). */
export function namesWhole(text: string, name: string): boolean;
