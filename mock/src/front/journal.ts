// The requests answered per credential (hashed), bounded: `GET /__mock/requests` lists them, `DELETE` clears them.
import { keyOf } from '../common/credential-key.js';
import type { Answer } from './app.js';
import { checkAuthorization } from './auth.js';
import type { Condition, Fault } from './conditions.js';
import { errorAnswer, notAllowed } from './errors.js';

export const JOURNAL_PATH = '/__mock/requests';
export const JOURNAL_ENTRIES = 500;
export const JOURNALS = 100;
const TEXT_LIMIT = 256;

export interface JournalEntry {
  method: string;
  path: string;
  /** Without `?` and without credentials (`page=2&limit=1`). */
  query: string;
  operationId: string | null;
  /** Null when no answer went out: the fault `reset`, or the client gave up first. */
  status: number | null;
  /** ISO 8601 */
  when: string;
  /** Milliseconds from arrival to answer, the delay included. */
  duration: number;
  delay: number;
  fault: Fault | null;
}

type Outcome = { operationId?: string | undefined; status: number | null; condition: Condition };

export type Journal = ReturnType<typeof createJournal>;

const cut = (text: string): string => (text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT - 1)}…` : text);

type Kept = { order: number; at: number; entry: Omit<JournalEntry, 'when'> };

export function createJournal() {
  // A Map keeps the least recently used journal first.
  const journals = new Map<string, Kept[]>();
  let recorded = 0;
  // Most requests carry the credential the last one did: its key is hashed once.
  let last: { authorization: string | undefined; key: string } = { authorization: undefined, key: '' };
  const keyFor = (authorization: string | undefined): string => {
    if (authorization !== last.authorization)
      last = {
        authorization,
        key: authorization !== undefined && checkAuthorization(authorization, undefined).ok ? keyOf(authorization) : '',
      };
    return last.key;
  };
  return {
    begin(method: string, url: URL, authorization: string | undefined) {
      const started = performance.now();
      const at = Date.now();
      return ({ operationId, status, condition }: Outcome): void => {
        // no hash is empty
        const key = keyFor(authorization);
        let query = '';
        if (url.search !== '') {
          const params = new URLSearchParams(url.search);
          // Gitea's `?token=` and `?access_token=` carry credentials.
          for (const name of ['token', 'access_token']) params.delete(name);
          query = cut(params.toString());
        }
        const entry = {
          method,
          path: cut(url.pathname),
          query,
          operationId: operationId ?? null,
          status,
          duration: Math.round(performance.now() - started),
          delay: condition.delay,
          fault: condition.fault ?? null,
        };
        const entries = journals.get(key) ?? [];
        journals.delete(key);
        journals.set(key, entries);
        entries.push({ order: recorded++, at, entry });
        if (entries.length > JOURNAL_ENTRIES) entries.shift();
        if (journals.size > JOURNALS) journals.delete(journals.keys().next().value!);
      };
    },
    /** Oldest first; of every credential, and of none, without one. */
    list(authorization?: string): JournalEntry[] {
      const entries =
        authorization === undefined ? [...journals.values()].flat() : (journals.get(keyOf(authorization)) ?? []);
      return entries
        .toSorted((a, b) => a.order - b.order)
        .map(({ at, entry }) => {
          const { method, path, query, operationId, status, duration, delay, fault } = entry;
          return { method, path, query, operationId, status, when: new Date(at).toISOString(), duration, delay, fault };
        });
    },
    clear(authorization?: string): void {
      if (authorization === undefined) journals.clear();
      else journals.delete(keyOf(authorization));
    },
  };
}

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
