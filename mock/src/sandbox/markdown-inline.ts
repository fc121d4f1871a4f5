// renderMarkdown's bounds and the renderer without threads (a browser's, the MSW browser build):
// a text past `maxInputBytes` or HTML past `maxOutputBytes` is 413 everywhere, and the answer's
// media type is what Go's sniffing gives Gitea's untyped answer. On the calling thread a render
// cannot be cut short, so only the byte bounds hold there (markdown.ts adds time and memory).
import { utf8Length } from '../common/bytes.js';
import renderHere, { type RenderResult, type RenderTask } from './markdown-render.js';

export interface MarkdownLimits {
  /** Longest text rendered, in UTF-8 bytes (default 1 MiB: a 1 MiB table takes seconds). */
  maxInputBytes: number;
  /** Longest HTML answered, in bytes (default 10 MiB). */
  maxOutputBytes: number;
  /**
   * Longest render, a worker's start included, and longest wait for a free worker, each in
   * milliseconds (default 5 s; worker threads only): past the first a text is refused with 413,
   * past the second the sandbox answers it is busy, 503.
   */
  timeoutMs: number;
}

export const MARKDOWN_LIMITS: MarkdownLimits = {
  maxInputBytes: 1024 * 1024,
  maxOutputBytes: 10 * 1024 * 1024,
  timeoutMs: 5_000,
};

export type RenderOutcome =
  | { ok: true; html: string }
  | { ok: false; status: 413; message: string }
  /** The sandbox is busy or stopping: `retryAfter` is the seconds to wait, for a `Retry-After` header. */
  | { ok: false; status: 503; message: string; retryAfter: number };

export interface MarkdownRenderer {
  render(task: Omit<RenderTask, 'maxOutputBytes'>): Promise<RenderOutcome>;
  close(): Promise<void>;
}

export const tooLarge = (message: string): RenderOutcome => ({ ok: false, status: 413, message });

/** A 503 to try again after the time bound, by which what is rendering now has finished or been ended. */
export const busy = (message: string, limits: MarkdownLimits): RenderOutcome => ({
  ok: false,
  status: 503,
  message: `${message}; try again`,
  retryAfter: Math.max(1, Math.ceil(limits.timeoutMs / 1000)),
});

/** The refusal of a text longer than the bound, or undefined; and its size in bytes. */
export function inputRefusal(text: string, limits: MarkdownLimits): { bytes: number; refusal?: RenderOutcome } {
  const bytes = utf8Length(text);
  return bytes > limits.maxInputBytes
    ? {
        bytes,
        refusal: tooLarge(
          `the sandbox renders at most ${limits.maxInputBytes} bytes of markdown; this text has ${bytes}`,
        ),
      }
    : { bytes };
}

/** A render's result as the sandbox answers it: the HTML, or 413 when it is longer than the bound. */
export function outcomeOf(result: RenderResult, limits: MarkdownLimits): RenderOutcome {
  return 'tooLarge' in result
    ? tooLarge(
        `the rendered HTML would be ${result.tooLarge} bytes, more than the ${limits.maxOutputBytes} the sandbox answers; send less text`,
      )
    : { ok: true, html: result.html };
}

/** Renders a text within the bounds on the calling thread. */
export function renderInline(task: Omit<RenderTask, 'maxOutputBytes'>, limits: MarkdownLimits): RenderOutcome {
  return outcomeOf(renderHere({ ...task, maxOutputBytes: limits.maxOutputBytes }), limits);
}

/** Renders every text on the calling thread, within the byte bounds. */
export function createInlineRenderer(limits: MarkdownLimits = MARKDOWN_LIMITS): MarkdownRenderer {
  return {
    async render(task) {
      return inputRefusal(task.text, limits).refusal ?? renderInline(task, limits);
    },
    async close() {},
  };
}

/** Signatures Go's http.DetectContentType reads as HTML, each followed by a space or `>`. */
const HTML_SIGNATURES = [
  '<!DOCTYPE HTML',
  '<HTML',
  '<HEAD',
  '<SCRIPT',
  '<IFRAME',
  '<H1',
  '<DIV',
  '<FONT',
  '<TABLE',
  '<A',
  '<STYLE',
  '<TITLE',
  '<B',
  '<BODY',
  '<BR',
  '<P',
  '<!--',
];

/** The media type Go's server gives an answer Gitea sends without one: HTML only for the signatures above. */
export function sniffedType(html: string): 'text/html' | 'text/plain' {
  const start = html
    .replace(/^[\t\n\x0c\r ]+/, '')
    .slice(0, 16)
    .toUpperCase();
  const isHtml = HTML_SIGNATURES.some(
    (signature) => start.startsWith(signature) && /^[ >]/.test(start.slice(signature.length)),
  );
  return isHtml ? 'text/html' : 'text/plain';
}
