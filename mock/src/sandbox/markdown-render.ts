// renderMarkdown's renderer: markdown-it (CommonMark with GitHub's tables, strikethrough and
// autolinks, as Gitea reads them), raw HTML escaped; in comment mode hard line breaks, and `#42`
// and `@user` linked as Gitea links them. Worker threads (markdown-worker.ts) or the calling thread run it.
import markdownIt from 'markdown-it';
import { utf8Length } from '../common/bytes.js';
import type { StateCore } from 'markdown-it';

export interface RenderTask {
  text: string;
  mode: string;
  /** The `Context` path, such as `/acme/rocket/src/branch/main`. */
  context: string | undefined;
  /** The server's origin, for links. */
  origin: string;
  /** The world's logins, lower-cased: the mentions that are linked. */
  users: string[];
  /** Longest HTML answered, in bytes. */
  maxOutputBytes: number;
}

export type RenderResult = { html: string } | { tooLarge: number };

const REFERENCE = /(^|[\s(])(#(\d+)|@([\w.-]+))(?=$|[\s.,;:!?)])/g;

/** What a comment's render is given (markdown-it's `env`). */
interface References {
  repoPath: string | undefined;
  origin: string;
  users: Set<string>;
}

/** Splits the text of comments into text and links for issue references and mentions. */
function linkReferences(state: StateCore): void {
  const env = state.env as unknown as References;
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
        const text = new state.Token('text', '', 0);
        text.content = token.content.slice(last, start);
        const open = new state.Token('link_open', 'a', 1);
        open.attrs = [
          ['href', href],
          ['class', issue ? 'ref-issue' : 'mention'],
        ];
        const inner = new state.Token('text', '', 0);
        inner.content = label;
        children.push(text, open, inner, new state.Token('link_close', 'a', -1));
        last = start + label.length;
      }
      if (last === 0) children.push(token);
      else {
        const rest = new state.Token('text', '', 0);
        rest.content = token.content.slice(last);
        children.push(rest);
      }
    }
    block.children = children;
  }
}

const document = markdownIt({ html: false, linkify: true, breaks: false });
const comment = markdownIt({ html: false, linkify: true, breaks: true });
comment.core.ruler.push('gitea_references', linkReferences);

export default function render({ text, mode, context, origin, users, maxOutputBytes }: RenderTask): RenderResult {
  const html =
    mode === 'comment'
      ? comment.render(text, {
          repoPath: /^\/[^/]+\/[^/]+/.exec(context ?? '')?.[0],
          origin,
          users: new Set(users),
        } satisfies References)
      : document.render(text);
  const bytes = utf8Length(html);
  // Only what the server may answer crosses back to it.
  return bytes > maxOutputBytes ? { tooLarge: bytes } : { html };
}
