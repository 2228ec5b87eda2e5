import hljs from 'highlight.js/lib/common';
import MarkdownIt, { type MarkdownIt as Markdown } from 'markdown-it';

/**
 * Markdown for assistant replies. Safe by construction:
 * - `html: false`: raw HTML in the text is escaped and shown, never parsed into elements;
 * - markdown-it's default `validateLink` drops javascript:, vbscript:, file: and most data: URLs;
 * - links open in a new tab without giving it our window (noopener) or referrer;
 * - images are off: a reply must not make the browser fetch arbitrary URLs (tracking
 *   pixels, or any host at all on an offline install); `![alt](url)` stays text.
 */
function createMarkdownRenderer(): Markdown {
  const md: Markdown = new MarkdownIt({
    html: false,
    linkify: true,
    breaks: false,
    highlight(code, language) {
      const lang = language && hljs.getLanguage(language) ? language : null;
      const highlighted = lang
        ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value
        : md.utils.escapeHtml(code);
      // Focusable, so a keyboard can scroll a long line sideways.
      return `<pre class="hljs" tabindex="0"><code class="hljs${lang ? ` language-${md.utils.escapeHtml(lang)}` : ''}">${highlighted}</code></pre>`;
    },
  });

  md.disable('image');

  // Each code block gets a header with its language and a Copy button (MessageContent handles
  // the click: no inline handler ever reaches the page).
  const renderFence =
    md.renderer.rules.fence ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const language = tokens[idx]?.info.trim().split(/\s+/)[0] || 'text';
    return (
      '<div class="code-block" data-code-block>' +
      `<div class="code-block-header"><span>${md.utils.escapeHtml(language)}</span>` +
      '<button type="button" class="code-block-copy" data-copy-code aria-label="Copy code">Copy</button></div>' +
      `${renderFence(tokens, idx, options, env, self)}</div>`
    );
  };

  const renderLinkOpen =
    md.renderer.rules.link_open ??
    ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    token?.attrSet('target', '_blank');
    token?.attrSet('rel', 'noopener noreferrer nofollow');
    return renderLinkOpen(tokens, idx, options, env, self);
  };
  return md;
}

/** Stateless once configured, so one instance serves every message. */
const markdown = createMarkdownRenderer();

/** Markdown text to HTML that is safe to put in `v-html`. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
}
