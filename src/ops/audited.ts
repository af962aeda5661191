/**
 * Acts outside the store's own transactions (an export, a restore, a
 * repair, a token issued from the CLI) recorded in the profile's audit
 * trail: after the act succeeded, or that it failed (docs/security.md#audit-trail).
 * The row goes through a writer store opened for it when the caller holds
 * none (a restore replaced the file, an export ran on a reader).
 */
import { isHearthError } from "../errors.js";
import type { Store } from "../store/api.js";
import type { AuditInput } from "../store/audit.js";
import { openStore } from "../store/open.js";

export interface AuditPlace {
  home?: string | undefined;
  profile?: string | undefined;
}

/**
 * Append `input` to the trail of `where`: on `store` when it is a writer,
 * else on a writer opened (and closed) for it. A failure to record is the
 * caller's error: an act that cannot be recorded is reported, not hidden.
 */
export async function recordAct(
  where: AuditPlace,
  input: AuditInput,
  store?: Store,
): Promise<void> {
  if (store && store.role === "writer" && !store.isClosed) {
    await store.audit.record(input);
    return;
  }
  const writer = await openStore({ home: where.home, profile: where.profile, role: "writer" });
  try {
    await writer.audit.record(input);
  } finally {
    await writer.close();
  }
}

/**
 * Run `act`; record it with `detail(result)` when it succeeded, or as
 * "failed" with the error's code when it threw (that record is best effort:
 * the act's own error is what the caller gets).
 */
export async function audited<T>(
  where: AuditPlace,
  input: AuditInput,
  act: () => Promise<T>,
  detail: (result: T) => AuditInput["detail"] = () => input.detail ?? null,
): Promise<T> {
  let result: T;
  try {
    result = await act();
  } catch (err) {
    if (!attempted(err)) throw err;
    const code = isHearthError(err) ? err.code : err instanceof Error ? err.name : "unknown";
    await recordFailure(where, {
      ...input,
      outcome: "failed",
      detail: { ...input.detail, error: code },
    });
    throw err;
  }
  await recordAct(where, { ...input, detail: detail(result) });
  return result;
}

/** False for a refusal before anything was tried: bad arguments, a declined confirmation. */
function attempted(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError) return false;
  return !isHearthError(err, "HEARTH_USAGE") && !isHearthError(err, "HEARTH_INVALID_ARG");
}

/** Record a failed act on the store as it is, never creating one (a reader opens only what exists). */
async function recordFailure(where: AuditPlace, input: AuditInput): Promise<void> {
  try {
    const reader = await openStore({ home: where.home, profile: where.profile, role: "reader" });
    await reader.close();
    await recordAct(where, input);
  } catch {
    // best effort: the act's own error is what the caller gets
  }
}
