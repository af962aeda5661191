/**
 * The session list's keyset cursor: the (lastActivityAt, id) of the last
 * session of a page, opaque to the browser (base64url JSON).
 */
export function encodeCursor(lastActivityAt: number, id: string): string {
  return Buffer.from(JSON.stringify([lastActivityAt, id])).toString("base64url");
}

/** A cursor this dashboard returned; anything else is a RangeError (400). */
export function decodeCursor(cursor: string): { lastActivityAt: number; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      Number.isSafeInteger(v[0]) &&
      typeof v[1] === "string"
    ) {
      return { lastActivityAt: v[0] as number, id: v[1] };
    }
  } catch {
    // fall through
  }
  throw new RangeError("cursor is not one this dashboard returned");
}
