import { type SearchTerm, searchTerms } from "../search.js";

/**
 * Search terms as an FTS5 query. Every term is quoted, so FTS5 operators
 * (AND, OR, NOT, NEAR, column filters, ^, *, parentheses) are searched as
 * plain words and no input can make MATCH throw; a phrase is one quoted
 * string.
 */
export function ftsMatch(terms: readonly SearchTerm[]): string {
  return terms.map((term) => `"${term.words.join(" ")}"`).join(" ");
}

/** What a person typed as a safe FTS5 query (../search.ts: searchTerms), or null when nothing is left. */
export function toFtsQuery(input: string): string | null {
  const terms = searchTerms(input);
  return terms.length > 0 ? ftsMatch(terms) : null;
}
