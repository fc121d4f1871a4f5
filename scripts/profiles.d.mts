// Types of scripts/profiles.mjs, for the suites that import it.
import type { JsonObject } from '../mock/src/contract/document.js';

export interface OverlayAction {
  target: string;
  description?: string;
  'x-summary'?: string;
  update?: unknown;
  remove?: boolean;
}

export interface Profile {
  name: string;
  /** The overlay's file, profiles/<name>.yaml. */
  file: string;
  overlay: { overlay: string; info: { title: string; version: string }; actions: OverlayAction[] };
}

/** openapi.yaml, parsed. */
export function loadBase(): Promise<JsonObject>;
/** Every profile, in the table's order (Gitea by version, then Forgejo). */
export function loadProfiles(): Promise<Profile[]>;
/** Each profile's document (the base with its overlay applied), in the table's order. */
export function profileDocuments(): Promise<{ name: string; document: JsonObject }[]>;
/** The actions that select nothing, each with its index and target. */
export function unmatchedActions(base: JsonObject, overlay: { actions: object[] }): { index: number; target: string }[];
/** Bundles every profile with Redocly into `<outDir>/<name>.json`; the files written. */
export function buildProfiles(outDir: string): Promise<string[]>;
/** The text of docs/profiles.md. */
export function profileTable(): Promise<string>;
