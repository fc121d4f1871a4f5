// E11 in the sandbox: the sent markdown rendered to HTML (markdown-render.ts says how), in worker
// threads, so no text holds the event loop that answers every other client: a small one can be
// slow too (16 KiB of one-cell table rows took up to 1.2 s), and no size short of a few bytes is
// cheap for certain. A render is bounded in input, output, time and memory; past a bound it is
// refused, and the worker that ran too long or too large is ended. Texts wait here for a free
// worker, not in Tinypool's queue, so that one that waited too long is told the sandbox is busy
// (503), not that it is too long (413). The bounds on bytes, the media type and the renderer that
// needs no threads (a browser's) are in markdown-inline.ts. Node only (tinypool).
import type Tinypool from 'tinypool';
import type { RenderResult, RenderTask } from './markdown-render.js';
import {
  inputRefusal,
  MARKDOWN_LIMITS,
  outcomeOf,
  tooLarge,
  type MarkdownLimits,
  type MarkdownRenderer,
  type RenderOutcome,
} from './markdown-inline.js';

export {
  MARKDOWN_LIMITS,
  sniffedType,
  type MarkdownLimits,
  type MarkdownRenderer,
} from './markdown-inline.js';

/** Renders in workers or waiting for one, at most; more answer 503. */
const MAX_IN_FLIGHT = 64;

/** Worker threads, so renders at once. */
const THREADS = 2;

/** The answer to a text that comes, or is still waiting or rendering, when the sandbox stops. */
const STOPPING: RenderOutcome = { ok: false, status: 503, message: 'the sandbox is stopping' };

/** Heap of one rendering worker: a 1 MiB text of emphasis takes about 250 MiB to render. */
const WORKER_HEAP_MB = 384;

// The worker is a file of its own: mock/dist/markdown-worker.mjs, beside the bundle that holds
// this module. Run from source (the test suites), this module takes the built one, which their
// setup keeps current (scripts/build-if-stale.mjs): Node 20 cannot run a TypeScript worker.
const WORKER = new URL(
  import.meta.url.endsWith('.ts') ? '../../dist/markdown-worker.mjs' : './markdown-worker.mjs',
  import.meta.url,
);

export function createMarkdownRenderer(limits: MarkdownLimits = MARKDOWN_LIMITS): MarkdownRenderer {
  let pool: Promise<Tinypool> | undefined;
  // Loaded and started on the first render: the examples mode and a sandbox that renders nothing never pay for it.
  const poolOf = (): Promise<Tinypool> =>
    (pool ??= import('tinypool').then(({ default: Pool }) => {
      const started = new Pool({
        filename: WORKER.href,
        // Two renders at once at most; idle workers go after a minute.
        minThreads: 0,
        maxThreads: THREADS,
        idleTimeout: 60_000,
        // Never reached: MAX_IN_FLIGHT refuses first. Tinypool's own refusal must not happen, as it
        // leaves the task's abort listener behind, and its later time-out crashes the process.
        maxQueue: MAX_IN_FLIGHT * 2,
        resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      });
      // A worker that fails while idle must not take the server with it (an unhandled 'error' would).
      started.on('error', () => {});
      return started;
    }));
  let closing = false;
  let inFlight = 0;
  /** Workers taken by a render; a finished render hands its worker to the first text waiting. */
  let taken = 0;
  /** Texts waiting for a free worker, first come first served: each is woken with its worker, or with false when the sandbox stops. */
  const waiting: ((go: boolean) => void)[] = [];

  /** Takes a free worker, waiting for one at most the time bound; whether it got one. */
  const takeWorker = (): Promise<boolean> => {
    if (taken < THREADS) {
      taken++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = (go: boolean) => {
        clearTimeout(timer);
        resolve(go);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(wake), 1);
        resolve(false);
      }, limits.timeoutMs);
      waiting.push(wake);
    });
  };
  const releaseWorker = (): void => {
    const next = closing ? undefined : waiting.shift();
    if (next) next(true);
    else taken--;
  };

  return {
    async render(task) {
      const { refusal } = inputRefusal(task.text, limits);
      if (refusal) return refusal;
      if (closing) return STOPPING;
      if (inFlight >= MAX_IN_FLIGHT)
        return { ok: false, status: 503, message: 'the sandbox is rendering too many texts at once; try again' };
      inFlight++;
      try {
        // The text did not get a worker in time: the sandbox is busy, which is no fault of the text.
        if (!(await takeWorker())) {
          return closing
            ? STOPPING
            : {
                ok: false,
                status: 503,
                message: `no worker was free to render this text within ${limits.timeoutMs} ms; try again`,
              };
        }
        let result: RenderResult;
        try {
          result = (await (
            await poolOf()
          ).run({ ...task, maxOutputBytes: limits.maxOutputBytes } satisfies RenderTask, {
            signal: AbortSignal.timeout(limits.timeoutMs),
          })) as RenderResult;
        } catch (error) {
          const { name, code } = error as NodeJS.ErrnoException;
          // Aborted by the time bound: Tinypool ends the worker, so the render stops too.
          if (name === 'AbortError')
            return tooLarge(
              `this text was not rendered within the ${limits.timeoutMs} ms the sandbox allows; send less text`,
            );
          if (code === 'ERR_WORKER_OUT_OF_MEMORY')
            return tooLarge(
              `rendering this text needed more than the ${WORKER_HEAP_MB} MiB the sandbox allows; send less text`,
            );
          // Renders cut short by close(): the server is stopping, and no one reads the answer.
          if (closing) return STOPPING;
          throw error;
        } finally {
          releaseWorker();
        }
        return outcomeOf(result, limits);
      } finally {
        inFlight--;
      }
    },
    async close() {
      closing = true;
      for (const wake of waiting.splice(0)) wake(false);
      await (await pool)?.destroy();
    },
  };
}
