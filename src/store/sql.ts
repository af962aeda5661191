/**
 * Statement text both engines run alike, differing only in how a parameter
 * is written: "?" (SQLite) or "$1", "$2", ... (PostgreSQL). A neutral module
 * assembles such a statement once through SqlParams; each backend says its
 * style and runs the text with `values`.
 */

/** How an engine writes a statement parameter. */
export type ParamStyle = "?" | "$";

export class SqlParams {
  readonly values: unknown[] = [];

  constructor(private readonly style: ParamStyle) {}

  /** Bind `value`: returns its placeholder, to put in the statement text. */
  add(value: unknown): string {
    this.values.push(value);
    return this.style === "?" ? "?" : `$${this.values.length}`;
  }
}

/** A statement written with "?" for PostgreSQL: "$first", "$first+1", ... in order. */
export function dollarParams(text: string, first = 1): string {
  let n = first - 1;
  return text.replace(/\?/g, () => `$${++n}`);
}
