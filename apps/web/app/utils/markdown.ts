import type { HLJSApi } from 'highlight.js';
import MarkdownIt, { type MarkdownIt as Markdown } from 'markdown-it';
import { shallowRef } from 'vue';

/**
 * Finished replies' HTML by their text: a transcript that is replaced (a refetch after each turn,
 * a version switch) or re-rendered parses each reply once, not once per render. Bounded, oldest
 * out first; text still streaming changes on every delta and is not kept.
 */
const renderedCache = new Map<string, string>();
const CACHE_LIMIT = 5000;

/**
 * highlight.js (~120 KB) is loaded the first time a reply holds a fenced code block with a
 * language, never on a page without one. Until it arrives, code is shown escaped and unhighlighted;
 * `highlighterReady` then flips, and what read it (MessageContent's render) renders again.
 */
let hljs: HLJSApi | null = null;
let loadingHighlighter = false;
export const highlighterReady = shallowRef(false);

function loadHighlighter(): void {
  if (loadingHighlighter) return;
  loadingHighlighter = true;
  import('highlight.js/lib/common').then(
    (module) => {
      hljs = module.default;
      highlighterReady.value = true;
      // Rendered without highlighting until now: render again (the cache keys on text only).
      renderedCache.clear();
    },
    // Not fatal: code stays plain, and the next code block tries again.
    () => {
      loadingHighlighter = false;
    },
  );
}

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
      if (language && !hljs) loadHighlighter();
      const lang = language && hljs?.getLanguage(language) ? language : null;
      const highlighted =
        lang && hljs
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

/** Markdown text to HTML that is safe to put in `v-html`; `final` text is cached. */
export function renderMarkdown(text: string, options: { final?: boolean } = {}): string {
  const cached = renderedCache.get(text);
  if (cached !== undefined) return cached;
  const html = markdown.render(text);
  if (options.final) {
    if (renderedCache.size >= CACHE_LIMIT) renderedCache.delete(renderedCache.keys().next().value as string);
    renderedCache.set(text, html);
  }
  return html;
}
