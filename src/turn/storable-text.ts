/**
 * What keeps a string from being stored exactly as it came: a lone UTF-16
 * surrogate (no UTF-8 for it: SQLite would keep invalid bytes, PostgreSQL
 * refuses it), and, in a name, a control character. Every process that
 * takes text from outside (the gateway's body, an ACP prompt) refuses the
 * same things, each in its own protocol's words.
 */
export function textProblem(value: string, isName: boolean): string | undefined {
  if (/\p{Cs}/u.test(value))
    return "contains a lone UTF-16 surrogate, which cannot be stored as text";
  if (isName && /\p{Cc}/u.test(value))
    return "contains a control character (NUL, newline, escape…)";
  return undefined;
}
