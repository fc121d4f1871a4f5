// `Prefer: code=404, example=otherRepository, dynamic=true` picks a documented response, and
// `Prefer: delay=400, fault=503` the conditions it is answered under (conditions.ts). Prism reads
// only part of a comma-separated header and answers a miss with a confusing 404, so the mock
// parses it and checks it against the document itself.
import type { MockOperation } from './operations.js';

/** What the network or the reverse proxy in front of Gitea does instead of answering (faults.ts). */
export type Fault = 'reset' | 502 | 503 | 504;

export const FAULTS: readonly Fault[] = ['reset', 502, 503, 504];

/** The longest delay a request may ask for, in milliseconds. */
export const MAX_DELAY_MS = 60_000;

export interface Preference {
  code?: number;
  example?: string;
  dynamic?: boolean;
  /** Milliseconds to hold the request before it is answered. */
  delay?: number;
  /** A fault instead of the answer; `none` keeps a request clear of `--faults`. */
  fault?: Fault | 'none';
}

/** A fault by its name in `Prefer` or on the command line (`reset`, `502` …), or undefined. */
export function faultNamed(name: string): Fault | undefined {
  return FAULTS.find((fault) => String(fault) === name);
}

export type PreferResult = { ok: true; preference: Preference } | { ok: false; message: string };

export function parsePrefer(header: string | undefined): PreferResult {
  const preference: Preference = {};
  if (header === undefined) return { ok: true, preference };
  for (const part of header.split(/[,;]/)) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    const key = (eq < 0 ? trimmed : trimmed.slice(0, eq)).trim().toLowerCase();
    const value =
      eq < 0
        ? ''
        : trimmed
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
    if (key === 'code') {
      if (!/^[1-5][0-9]{2}$/.test(value))
        return { ok: false, message: `Prefer: code must be a three-digit status, not "${value}"` };
      preference.code = Number(value);
    } else if (key === 'example') {
      if (value === '') return { ok: false, message: 'Prefer: example needs a name' };
      preference.example = value;
    } else if (key === 'dynamic') {
      if (value !== 'true' && value !== 'false')
        return { ok: false, message: `Prefer: dynamic must be true or false, not "${value}"` };
      preference.dynamic = value === 'true';
    } else if (key === 'delay') {
      if (!/^[0-9]{1,5}$/.test(value) || Number(value) > MAX_DELAY_MS)
        return {
          ok: false,
          message: `Prefer: delay must be whole milliseconds from 0 to ${MAX_DELAY_MS}, not "${value}"`,
        };
      preference.delay = Number(value);
    } else if (key === 'fault') {
      const fault = value === 'none' ? value : faultNamed(value);
      if (fault === undefined)
        return { ok: false, message: `Prefer: fault must be reset, 502, 503, 504 or none, not "${value}"` };
      preference.fault = fault;
    }
    // Other preferences (return=minimal, respond-async, …) are not ours to refuse.
  }
  return { ok: true, preference };
}

/** Checks a preference against what the operation documents; the message names what exists. */
export function checkPreference(op: MockOperation, preference: Preference): string | undefined {
  const codes = [...op.responses.keys()];
  if (preference.code !== undefined && !op.responses.has(preference.code)) {
    return `Prefer: code=${preference.code} is not documented for ${op.operationId}; documented: ${codes.join(', ')}`;
  }
  if (preference.example !== undefined) {
    const scope = preference.code === undefined ? codes : [preference.code];
    const names = scope.flatMap((code) => op.responses.get(code) ?? []);
    if (!names.includes(preference.example)) {
      const where = preference.code === undefined ? op.operationId : `${op.operationId} ${preference.code}`;
      const known = names.length > 0 ? names.join(', ') : 'none';
      return `Prefer: example=${preference.example} is not documented for ${where}; documented examples: ${known}`;
    }
  }
  return undefined;
}

/** The status whose response holds the example, so Prism is asked for a consistent pair. */
export function codeOfExample(op: MockOperation, example: string): number | undefined {
  for (const [code, names] of op.responses) if (names.includes(example)) return code;
  return undefined;
}
