// One API request's way through its conditions into the journal, for the Fetch front and the proxy:
// held for its delay, then its fault instead of its answer; a client gone while held leaves nothing
// to run; past the ceiling of held requests, refused at once. Recorded once answered.
import { hold, type Conditions, type HoldRefusal } from './conditions.js';
import type { Journal } from './journal.js';
import { parsePrefer, type Fault, type PreferResult } from './prefer.js';

/** What the conditions need to know of a request. */
export interface ConditionedRequest {
  method: string;
  url: URL;
  authorization: string | undefined;
  prefer: string | undefined;
  /** The document's operation, for the journal. */
  operationId: string | undefined;
  /** Aborts when the client leaves; asked for only while a request is held. */
  signal(): AbortSignal;
}

/** How a way in answers, faults and resets, and what status it sent (null: none). */
export interface Ways<T> {
  answer(prefer: PreferResult): Promise<T>;
  /** Starts what may run while the request is held (reading its body), so a delay leaves the client its whole time to send it. */
  held?(): void;
  fault(fault: Exclude<Fault, 'reset'>): T;
  /** The refusal of a request past a ceiling on held requests, in the dialect with `Retry-After`. */
  refuse(refusal: HoldRefusal): T;
  reset(): T;
  statusOf(sent: T): number | null;
}

export async function underConditions<T>(
  { conditions, journal }: { conditions: Conditions; journal: Journal },
  request: ConditionedRequest,
  ways: Ways<T>,
): Promise<T> {
  const prefer = parsePrefer(request.prefer);
  const record = journal.begin(request.method, request.url, request.authorization);
  const decided = conditions.decide(prefer.ok ? prefer.preference : {});
  const admitted = decided.delay > 0 ? conditions.admitHeld(request.authorization) : undefined;
  // A refused request was neither held nor faulted.
  const condition = typeof admitted === 'object' ? { delay: 0 } : decided;
  const sent = await (async (): Promise<T> => {
    if (typeof admitted === 'object') return ways.refuse(admitted);
    if (admitted) {
      const signal = request.signal();
      try {
        ways.held?.();
        await hold(condition.delay, signal);
      } finally {
        admitted();
      }
      if (signal.aborted) return ways.reset();
    }
    if (condition.fault === undefined) return ways.answer(prefer);
    return condition.fault === 'reset' ? ways.reset() : ways.fault(condition.fault);
  })();
  record({ operationId: request.operationId, status: ways.statusOf(sent), condition });
  return sent;
}
