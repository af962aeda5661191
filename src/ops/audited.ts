/**
 * Acts outside the store's own transactions (an export, a restore, a
 * repair) recorded in the profile's audit trail after they succeeded
 * (docs/security.md#audit-trail). A refusal or a failure is not recorded:
 * a refused act changes nothing, the store included. The row goes through
 * a writer store opened for it when the caller holds none (a restore
 * replaced the file, an export ran on a reader).
 */
import type { Store } from "../store/api.js";
import type { AuditInput } from "../store/audit.js";
import { openStore } from "../store/open.js";

export interface AuditPlace {
  home?: string | undefined;
  profile?: string | undefined;
}

/**
 * Append `input` to the trail of `where`: on `store` when it is an open
 * writer, else on a writer opened (and closed) for it. A failure to record
 * is the caller's error: an act that cannot be recorded is reported, not
 * hidden.
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
  // The act ran on an existing store; a store gone since is not created anew for one row.
  const writer = await openStore({
    home: where.home,
    profile: where.profile,
    role: "writer",
    create: false,
  });
  try {
    await writer.audit.record(input);
  } finally {
    await writer.close();
  }
}

/**
 * Run `act`, then record it with `detail(result)`; a `detail` of false
 * means the act did nothing (a healthy store's repair) and records nothing.
 */
export async function audited<T>(
  where: AuditPlace,
  input: AuditInput,
  act: () => Promise<T>,
  detail: (result: T) => AuditInput["detail"] | false = () => input.detail ?? null,
): Promise<T> {
  const result = await act();
  const recorded = detail(result);
  if (recorded !== false) await recordAct(where, { ...input, detail: recorded });
  return result;
}
