// E11 in the sandbox: the sent markdown rendered to HTML by markdown-it (CommonMark with GitHub's
// tables, strikethrough and autolinks, as Gitea's renderer reads them), raw HTML escaped, and in
// comment mode hard line breaks, `#42` issue references and `@user` mentions linked as Gitea links
// them. The media type is what Go's content sniffing gives Gitea's untyped answer.
import type { MarkdownIt, StateCore } from 'markdown-it';

export interface RenderOptions {
  text: string;
  mode: string;
  /** The `Context` path, such as `/acme/rocket/src/branch/main`. */
  context: string | undefined;
  /** The server's origin, for links. */
  origin: string;
  /** Whether a login names a user, for mentions. */
  isUser: (login: string) => boolean;
}

const REFERENCE = /(^|[\s(])(#(\d+)|@([\w.-]+))(?=$|[\s.,;:!?)])/g;

/** Splits the text of comments into text and links for issue references and mentions. */
function linkReferences(state: StateCore): void {
  const env = state.env as { repoPath?: string; origin: string; isUser: (login: string) => boolean };
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
        const href = issue && env.repoPath ? `${env.origin}${env.repoPath}/issues/${issue}` : login && env.isUser(login) ? `${env.origin}/${login}` : undefined;
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

let renderers: Promise<{ document: MarkdownIt; comment: MarkdownIt }> | undefined;

/** Loaded on the first render: the examples mode and a sandbox that renders nothing never pay for it. */
function loadRenderers(): Promise<{ document: MarkdownIt; comment: MarkdownIt }> {
  renderers ??= import('markdown-it').then(({ default: markdownIt }) => {
    const comment = markdownIt({ html: false, linkify: true, breaks: true });
    comment.core.ruler.push('gitea_references', linkReferences);
    return { document: markdownIt({ html: false, linkify: true, breaks: false }), comment };
  });
  return renderers;
}

export async function renderMarkdown({ text, mode, context, origin, isUser }: RenderOptions): Promise<string> {
  const { document, comment } = await loadRenderers();
  if (mode !== 'comment') return document.render(text);
  const repoPath = /^\/[^/]+\/[^/]+/.exec(context ?? '')?.[0];
  return comment.render(text, { repoPath, origin, isUser });
}

/** Signatures Go's http.DetectContentType reads as HTML, each followed by a space or `>`. */
const HTML_SIGNATURES = ['<!DOCTYPE HTML', '<HTML', '<HEAD', '<SCRIPT', '<IFRAME', '<H1', '<DIV', '<FONT', '<TABLE', '<A', '<STYLE', '<TITLE', '<B', '<BODY', '<BR', '<P', '<!--'];

/** The media type Go's server gives an answer Gitea sends without one: HTML only for the signatures above. */
export function sniffedType(html: string): 'text/html' | 'text/plain' {
  const start = html.replace(/^[\t\n\x0c\r ]+/, '').slice(0, 16).toUpperCase();
  const isHtml = HTML_SIGNATURES.some((signature) => start.startsWith(signature) && /^[ >]/.test(start.slice(signature.length)));
  return isHtml ? 'text/html' : 'text/plain';
}
