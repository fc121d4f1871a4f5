// renderMarkdown's renderer (markdown-it, as Gitea reads markdown: GitHub's tables, strikethrough and autolinks, raw HTML escaped) and its byte bounds, 413 past them.
import markdownIt, { type StateCore } from 'markdown-it';
import { utf8Length } from '../common/bytes.js';

export const MARKDOWN_LIMITS = {
  /** Longest text rendered, in UTF-8 bytes (default 1 MiB: a 1 MiB table takes seconds). */
  maxInputBytes: 1024 * 1024,
  /** Longest HTML answered, in bytes (default 10 MiB). */
  maxOutputBytes: 10 * 1024 * 1024,
  /** Longest render, a worker's start included (past it 413), and longest wait for a free worker (past it 503), in ms (default 5 s; worker threads only). */
  timeoutMs: 5_000,
};

export type MarkdownLimits = typeof MARKDOWN_LIMITS;

export interface RenderTask {
  text: string;
  mode: string;
  /** The `Context` path, such as `/acme/rocket/src/branch/main`. */
  context: string | undefined;
  origin: string;
  /** The world's logins, lower-cased: the mentions that are linked. */
  users: string[];
  maxOutputBytes: number;
}

export type RenderOutcome =
  | { ok: true; html: string }
  | { ok: false; status: 413; message: string }
  /** The sandbox is busy or stopping: `retryAfter` is the seconds to wait, for a `Retry-After` header. */
  | { ok: false; status: 503; message: string; retryAfter: number };

export interface MarkdownRenderer {
  render(task: Omit<RenderTask, 'maxOutputBytes'>): Promise<RenderOutcome>;
  close(): Promise<void>;
}

const REFERENCE = /(^|[\s(])(#(\d+)|@([\w.-]+))(?=$|[\s.,;:!?)])/g;

/** What a comment's render is given (markdown-it's `env`). */
type References = { repoPath: string | undefined; origin: string; users: Set<string> };

/** Links the issue references and mentions in the text of comments. */
function linkReferences(state: StateCore): void {
  const env = state.env as unknown as References;
  const textToken = (content: string) => Object.assign(new state.Token('text', '', 0), { content });
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const children = [];
    let inLink = 0;
    for (const token of block.children) {
      if (token.type === 'link_open') inLink++;
      if (token.type === 'link_close') inLink--;
      if (token.type !== 'text' || inLink > 0) {
        children.push(token);
        continue;
      }
      let last = 0;
      for (const match of token.content.matchAll(REFERENCE)) {
        const [, lead = '', label = '', issue, login] = match;
        const href =
          issue && env.repoPath
            ? `${env.origin}${env.repoPath}/issues/${issue}`
            : login && env.users.has(login.toLowerCase())
              ? `${env.origin}/${login}`
              : undefined;
        if (!href) continue;
        const start = match.index + lead.length;
        const open = new state.Token('link_open', 'a', 1);
        open.attrSet('href', href);
        open.attrSet('class', issue ? 'ref-issue' : 'mention');
        children.push(textToken(token.content.slice(last, start)), open, textToken(label));
        children.push(new state.Token('link_close', 'a', -1));
        last = start + label.length;
      }
      children.push(last === 0 ? token : textToken(token.content.slice(last)));
    }
    block.children = children;
  }
}

const document = markdownIt({ html: false, linkify: true, breaks: false });
const comment = markdownIt({ html: false, linkify: true, breaks: true });
comment.core.ruler.push('gitea_references', linkReferences);

/** Renders on this thread; only what the server may answer crosses back to it from a worker. */
export default function render({ text, mode, context, origin, users, maxOutputBytes }: RenderTask): RenderOutcome {
  const html =
    mode === 'comment'
      ? comment.render(text, {
          repoPath: /^\/[^/]+\/[^/]+/.exec(context ?? '')?.[0],
          origin,
          users: new Set(users),
        } satisfies References)
      : document.render(text);
  const bytes = utf8Length(html);
  if (bytes <= maxOutputBytes) return { ok: true, html };
  return tooLarge(`the rendered HTML would be ${bytes} bytes, more than the ${maxOutputBytes} the sandbox answers`);
}

export function tooLarge(what: string): RenderOutcome {
  return { ok: false, status: 413, message: `${what}; send less text` };
}

export function inputRefusal(text: string, limits: MarkdownLimits): { bytes: number; refusal?: RenderOutcome } {
  const bytes = utf8Length(text);
  const message = `the sandbox renders at most ${limits.maxInputBytes} bytes of markdown; this text has ${bytes}`;
  return bytes <= limits.maxInputBytes ? { bytes } : { bytes, refusal: { ok: false, status: 413, message } };
}

export const createInlineRenderer = (limits: MarkdownLimits = MARKDOWN_LIMITS): MarkdownRenderer => ({
  render: async (task) =>
    inputRefusal(task.text, limits).refusal ?? render({ ...task, maxOutputBytes: limits.maxOutputBytes }),
  close: async () => {},
});

/** The media type Go's http.DetectContentType gives an answer Gitea sends without one: HTML only for these signatures. */
const HTML_SIGNATURE =
  /^[\t\n\x0c\r ]*(<!DOCTYPE HTML|<HTML|<HEAD|<SCRIPT|<IFRAME|<H1|<DIV|<FONT|<TABLE|<A|<STYLE|<TITLE|<B|<BODY|<BR|<P|<!--)[ >]/i;
export const sniffedType = (html: string): 'text/html' | 'text/plain' =>
  HTML_SIGNATURE.test(html) ? 'text/html' : 'text/plain';
