// What the exchanges checked came to, per operation or webhook, for the proxy's report and the webhook receiver's.
import { redact } from '../common/redaction.js';

// Long texts in lines and reports: a peer's field name or value may be megabytes long.
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The kind of a violation line written `<side> <where> …`, such as `response.headers`, in the proxy's and live mode's reports. */
export function kindOf(line: string): string {
  const [side = '', part = ''] = line.split(' ');
  const area = part.split(/[.:]/)[0] ?? '';
  return `${side}.${({ header: 'headers', content: 'content-type' } as Record<string, string>)[area] ?? area}`;
}

export type Found = { line: string; count: number };

export interface ExchangeStats {
  exchanges: number;
  withViolations: number;
  /** Violations by kind, such as `response.body`. */
  violations: Record<string, number>;
  /** Each distinct violation, redacted, as its line says it, with its count. */
  messages: Record<string, number>;
}

export const total = (found: readonly Found[]): number => found.reduce((sum, { count }) => sum + count, 0);

/** Distinct violations listed per name; a server inventing a new field name in every answer cannot grow it without end. */
const MESSAGES_PER_NAME = 100;
const MORE_MESSAGES = '(further distinct violations, not listed)';

/** The most characters of a violation's line that a line or a report shows, cut after it is redacted. */
export const LINE_CHARS = 2_000;

export function createExchangeReport() {
  const stats = new Map<string, ExchangeStats>();
  return {
    /** Counts one exchange of `name` with its violations (none when it conforms), redacted of `secrets`. */
    record(name: string, violations: readonly Found[], secrets: readonly string[]) {
      const entry = stats.get(name) ?? { exchanges: 0, withViolations: 0, violations: {}, messages: {} };
      entry.exchanges++;
      if (violations.length > 0) entry.withViolations++;
      for (const { line, count } of violations) {
        entry.violations[kindOf(line)] = (entry.violations[kindOf(line)] ?? 0) + count;
        const known = Object.keys(entry.messages).length;
        const message = clip(redact(line, secrets), LINE_CHARS);
        const key = Object.hasOwn(entry.messages, message) || known < MESSAGES_PER_NAME ? message : MORE_MESSAGES;
        entry.messages[key] = (entry.messages[key] ?? 0) + 1;
      }
      stats.set(name, entry);
    },
    byName(): Record<string, ExchangeStats> {
      return Object.fromEntries([...stats].sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}
