/**
 * Turn what a person typed into a safe FTS5 query. Every term is quoted, so
 * FTS5 operators (AND, OR, NOT, NEAR, column filters, ^, *, parentheses)
 * are searched as plain words and no input can make MATCH throw. Balanced
 * double quotes keep a phrase together. Returns null when nothing is left
 * to search for.
 */
export function toFtsQuery(input: string): string | null {
  const parts: string[] = [];
  const quoteCount = (input.match(/"/g) ?? []).length;
  const segments =
    quoteCount >= 2 && quoteCount % 2 === 0 ? input.split('"') : [input.replaceAll('"', " ")];
  segments.forEach((segment, i) => {
    const words = segment.match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
    if (words.length === 0) return;
    const inPhrase = i % 2 === 1;
    if (inPhrase) parts.push(`"${words.join(" ")}"`);
    else for (const word of words) parts.push(`"${word}"`);
  });
  return parts.length > 0 ? parts.join(" ") : null;
}
