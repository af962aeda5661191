import MarkdownIt from "markdown-it";

/**
 * Message text as markdown, safely: markdown-it with raw HTML off (a
 * `<script>` in a message is escaped text), images off (nothing is fetched
 * for a message), links only to http(s), mailto, in-page or relative
 * addresses (`javascript:`, `data:`, `vbscript:`, `file:` and every other
 * scheme stay text) and opened with `rel="noopener noreferrer"`. Code
 * blocks are monospace with a copy button (delegated: see onCopyClick).
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
md.disable(["image"]);

const SAFE_SCHEME = /^(https?:|mailto:)/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** A link's address is followed only when it is http(s), mailto, or has no scheme at all. */
export function safeHref(url: string): boolean {
  // Browsers ignore tabs, newlines and leading control characters in a scheme ("java\tscript:").
  // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters browsers drop
  const bare = url.replace(/[\u0000-\u0020\u007f]/g, "");
  return SAFE_SCHEME.test(bare) || !ANY_SCHEME.test(bare);
}
md.validateLink = safeHref;

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  token.attrSet("rel", "noopener noreferrer");
  token.attrSet("target", "_blank");
  return self.renderToken(tokens, idx, options);
};

const escapeHtml = md.utils.escapeHtml;
md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx]!;
  const lang = token.info.trim().split(/\s+/)[0] ?? "";
  const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "";
  return `<div class="code-block">${label}<button type="button" class="copy ghost"><span class="copy-label">Copy</span><span class="sr-only"> code</span></button><pre><code>${escapeHtml(token.content)}</code></pre></div>\n`;
};
md.renderer.rules.code_block = md.renderer.rules.fence;

/** HTML for a message's text: every character of the text escaped, only markdown's own tags. */
export function renderMarkdown(text: string): string {
  return md.render(text).trim();
}

/** A click on a code block's Copy button copies its code (event delegation on the message). */
export function onCopyClick(e: MouseEvent): void {
  const button = (e.target as HTMLElement).closest("button.copy");
  const code = button?.parentElement?.querySelector("pre code");
  if (!button || !code) return;
  const text = code.textContent ?? "";
  const label = button.querySelector(".copy-label");
  const done = () => {
    if (!label) return;
    label.textContent = "Copied";
    setTimeout(() => {
      label.textContent = "Copy";
    }, 1500);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => undefined);
}
