/**
 * Control characters that would drive a terminal (escape sequences that
 * retitle the window, clear the screen or rewrite lines), and the bidi
 * overrides that reorder text, shown as visible escapes. For human output
 * only: `--json` output and JSON exports stay exact.
 */
const CONTROL = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** `text` with control characters escaped (`\x1b`, `\u202e`); newlines kept unless `oneLine`. */
export function printable(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (c === "\t") return c;
    if (c === "\n") return options.oneLine ? "\\n" : c;
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
