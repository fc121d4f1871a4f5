// The time live mode may take: the whole run (--timeout) and each request in it
// (--request-timeout), whichever ends first. A server that falls silent after /version costs the
// run's bound at most, and a request cut short says which bound cut it.

interface RequestTimer {
  /** Aborts the request, and the reading of its answer, when its time is up. */
  signal: AbortSignal;
  /** Why the request was cut short, once it was: `no answer within the --request-timeout of 30 s`. */
  timedOut(): string | undefined;
  /** Stops the timer; call it once the answer is read. */
  done(): void;
}

export interface Budget {
  /** Why nothing more may be sent, once the run's time is up. */
  spent(): string | undefined;
  /** The most time left to one request, or undefined when the run's time is up. */
  request(): RequestTimer | undefined;
  /** Milliseconds left to the run, for a step that has a bound of its own. */
  left(): number;
}

const seconds = (ms: number): string => `${ms / 1000} s`;

export function createBudget(runMs: number, requestMs: number): Budget {
  const ends = performance.now() + runMs;
  const ranOut = `the run's --timeout of ${seconds(runMs)} ran out`;
  const left = (): number => Math.max(0, ends - performance.now());
  return {
    left,
    spent: () => (left() > 0 ? undefined : ranOut),
    request() {
      const remaining = left();
      if (remaining <= 0) return undefined;
      const byRun = remaining < requestMs;
      const reason = byRun ? ranOut : `no answer within the --request-timeout of ${seconds(requestMs)}`;
      const controller = new AbortController();
      // A timer of our own, not AbortSignal.timeout: that one does not keep the process alive, and
      // a fetch hung on a closed connection would let Node exit 13 without a word (reachability.ts).
      const timer = setTimeout(() => controller.abort(new Error(reason)), Math.min(remaining, requestMs));
      return {
        signal: controller.signal,
        timedOut: () => (controller.signal.aborted ? reason : undefined),
        done: () => clearTimeout(timer),
      };
    },
  };
}
