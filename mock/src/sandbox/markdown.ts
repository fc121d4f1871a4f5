// renderMarkdown in Node: a short text on the calling thread, a longer one in a worker thread bounded in time and memory, waiting for a free worker here, not in Tinypool's queue.
import type Tinypool from 'tinypool';
import render, { inputRefusal, MARKDOWN_LIMITS, tooLarge, type RenderOutcome } from './markdown-render.js';
import type { MarkdownLimits, MarkdownRenderer, RenderTask } from './markdown-render.js';

/** Texts up to this many UTF-8 bytes render on the calling thread. */
const INLINE_BYTES = 2 * 1024;
/** Bytes of text rendering in the workers or waiting for one, at most; a text past it is refused at once. */
const QUEUED_BYTES = 4 * 1024 * 1024;
const THREADS = 2;
/** Heap of one rendering worker: a 1 MiB text of emphasis takes about 250 MiB to render. */
const WORKER_HEAP_MB = 384;
// mock/dist/markdown-worker.mjs, beside this module's bundle; run from source (the suites), the built one, which their
// setup keeps current (scripts/build-if-stale.mjs): Node 20 cannot run a TypeScript worker.
const WORKER = new URL(
  import.meta.url.endsWith('.ts') ? '../../dist/markdown-worker.mjs' : './markdown-worker.mjs',
  import.meta.url,
);

export function createMarkdownRenderer(limits: MarkdownLimits = MARKDOWN_LIMITS): MarkdownRenderer {
  let pool: Promise<Tinypool> | undefined;
  // Loaded and started on the first long text: the examples mode and short texts never pay for it.
  const poolOf = (): Promise<Tinypool> =>
    (pool ??= import('tinypool').then(({ default: Pool }) => {
      const started = new Pool({
        filename: WORKER.href,
        minThreads: 0,
        maxThreads: THREADS,
        idleTimeout: 60_000,
        // Never reached: at most THREADS tasks are given to Tinypool at once. Its own refusal must not happen, as it
        // leaves the task's abort listener behind, whose time-out crashes the process.
        maxQueue: THREADS * 2,
        resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      });
      // A worker that fails while idle must not take the server with it (an unhandled 'error' would).
      started.on('error', () => {});
      return started;
    }));
  // A 503 to try again after the time bound, by which what is rendering now has finished or been ended.
  const retryAfter = Math.max(1, Math.ceil(limits.timeoutMs / 1000));
  const busy = (what: string): RenderOutcome => ({ ok: false, status: 503, message: `${what}; try again`, retryAfter });
  const stopping = busy('the sandbox is stopping');
  let closing = false;
  let queued = 0;
  /** Workers taken by a render; a finished render hands its worker to the first text waiting. */
  let taken = 0;
  /** Texts waiting for a free worker, first come first served: each is woken with its worker, or with false when the sandbox stops. */
  const waiting: ((go: boolean) => void)[] = [];

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

  async function renderInWorker(task: Omit<RenderTask, 'maxOutputBytes'>, bytes: number) {
    if (queued + bytes > QUEUED_BYTES)
      return busy(`the sandbox has ${queued} bytes of markdown to render before this text`);
    queued += bytes;
    try {
      // The text did not get a worker in time: the sandbox is busy, which is no fault of the text.
      if (!(await takeWorker()))
        return closing ? stopping : busy(`no worker was free to render this text within ${limits.timeoutMs} ms`);
      try {
        const full = { ...task, maxOutputBytes: limits.maxOutputBytes } satisfies RenderTask;
        return (await (await poolOf()).run(full, { signal: AbortSignal.timeout(limits.timeoutMs) })) as RenderOutcome;
      } catch (error) {
        const { name, code } = error as NodeJS.ErrnoException;
        // Aborted by the time bound: Tinypool ends the worker, so the render stops too.
        if (name === 'AbortError')
          return tooLarge(`this text was not rendered within the ${limits.timeoutMs} ms the sandbox allows`);
        if (code === 'ERR_WORKER_OUT_OF_MEMORY')
          return tooLarge(`rendering this text needed more than the ${WORKER_HEAP_MB} MiB the sandbox allows`);
        // Renders cut short by close(): the server is stopping, and no one reads the answer.
        if (closing) return stopping;
        throw error;
      } finally {
        const next = closing ? undefined : waiting.shift();
        if (next) next(true);
        else taken--;
      }
    } finally {
      queued -= bytes;
    }
  }

  return {
    async render(task) {
      const { bytes, refusal } = inputRefusal(task.text, limits);
      if (refusal) return refusal;
      if (closing) return stopping;
      if (bytes > INLINE_BYTES) return renderInWorker(task, bytes);
      return render({ ...task, maxOutputBytes: limits.maxOutputBytes });
    },
    async close() {
      closing = true;
      for (const wake of waiting.splice(0)) wake(false);
      await (await pool)?.destroy();
    },
  };
}
