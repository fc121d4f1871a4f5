// The journal of the requests answered per credential (hashed), without query tokens, bounded: `GET /__mock/requests`
// lists them, `DELETE` clears them. Requests without a well-formed credential are kept apart, for MSW's `requests()`.
import { keyOf } from '../common/credential-key.js';
import type { Answer } from './app.js';
import { checkAuthorization } from './auth.js';
import type { Condition } from './conditions.js';
import { errorAnswer, notAllowed } from './errors.js';
import type { Fault } from './conditions.js';

export const JOURNAL_PATH = '/__mock/requests';
/** Requests kept per credential (older ones go first), and credentials with a journal. */
export const JOURNAL_ENTRIES = 500;
export const JOURNALS = 100;
/** Characters of a path or query kept; a longer one is cut and ends in `…`. */
const TEXT_LIMIT = 256;

export interface JournalEntry {
  /** As sent: `GET`, `PATCH` … */
  method: string;
  /** Such as `/api/v1/repos/acme/rocket/keys/11001`. */
  path: string;
  /** The query string without `?` and without credentials (`page=2&limit=1`); empty when none. */
  query: string;
  /** The document's operation, or null (`/api/v1/version`, a path no operation has). */
  operationId: string | null;
  /** The status answered, or null when no answer went out: the fault `reset`, or the client gave up first. */
  status: number | null;
  /** When the request arrived (ISO 8601). */
  when: string;
  /** Milliseconds from its arrival to its answer, the delay included. */
  duration: number;
  /** Milliseconds it was held before it was answered (0: none). */
  delay: number;
  /** The fault it got instead of its answer, or null. */
  fault: Fault | null;
}

export interface Journal {
  /** Notes the arrival of a request; the function it returns records it once answered. */
  begin(
    method: string,
    url: URL,
    authorization: string | undefined,
  ): (outcome: { operationId?: string | undefined; status: number | null; condition: Condition }) => void;
  /** The requests of a credential (an `Authorization` value), oldest first; of every credential, and of none, without one. */
  list(authorization?: string): JournalEntry[];
  /** Forgets the requests of a credential; of all, without one. */
  clear(authorization?: string): void;
}

const cut = (text: string): string => (text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT - 1)}…` : text);

export function createJournal(): Journal {
  /** Entries by journal, each with its place in the order of all; a Map keeps the least recently used journal first. */
  const journals = new Map<string, { order: number; entry: JournalEntry }[]>();
  let recorded = 0;
  return {
    begin(method, url, authorization) {
      const started = performance.now();
      const when = new Date().toISOString();
      return ({ operationId, status, condition }) => {
        // The anonymous journal's key: no hash is empty.
        const key =
          authorization !== undefined && checkAuthorization(authorization, undefined).ok ? keyOf(authorization) : '';
        const query = new URLSearchParams(url.search);
        // Gitea's `?token=` and `?access_token=` carry credentials.
        query.delete('token');
        query.delete('access_token');
        const entry: JournalEntry = {
          method,
          path: cut(url.pathname),
          query: cut(query.toString()),
          operationId: operationId ?? null,
          status,
          when,
          duration: Math.round(performance.now() - started),
          delay: condition.delay,
          fault: condition.fault ?? null,
        };
        const entries = journals.get(key) ?? [];
        journals.delete(key);
        journals.set(key, entries);
        entries.push({ order: recorded++, entry });
        if (entries.length > JOURNAL_ENTRIES) entries.shift();
        if (journals.size > JOURNALS) journals.delete(journals.keys().next().value!);
      };
    },
    list(authorization) {
      const entries =
        authorization === undefined ? [...journals.values()].flat() : (journals.get(keyOf(authorization)) ?? []);
      return entries.toSorted((a, b) => a.order - b.order).map(({ entry }) => ({ ...entry }));
    },
    clear(authorization) {
      if (authorization === undefined) journals.clear();
      else journals.delete(keyOf(authorization));
    },
  };
}

/** The answer of `/__mock/requests`: GET lists the credential's journal, DELETE clears it. */
export function journalAnswer(
  journal: Journal,
  method: string,
  authorization: string | undefined,
  docsUrl: string,
): Answer {
  if (!['GET', 'HEAD', 'DELETE'].includes(method)) return notAllowed(docsUrl, method, JOURNAL_PATH, ['GET', 'DELETE']);
  const auth = checkAuthorization(authorization, undefined);
  if (!auth.ok) return errorAnswer(docsUrl, 401, auth.message);
  if (method === 'DELETE') {
    journal.clear(authorization);
    return { status: 204, own: true };
  }
  return { status: 200, type: 'application/json', body: journal.list(authorization), own: true };
}
