/**
 * The seam between maintenance callers (the CLI, the worker's jobs) and the
 * backend that serves a profile: a SQLite file under the home, or the
 * PostgreSQL database of `store.url`. Callers ask here which one it is,
 * before opening anything, and call the backend's op through the functions
 * below; nothing else in them names a backend. PostgreSQL's code loads only
 * for a PostgreSQL profile.
 */

import { loadConfigLazily } from "../config/load-lazily.js";
import { databasePath, resolveLocation } from "../config/paths.js";
import type { PgSettings } from "../config/pg.js";
import { HearthError } from "../errors.js";
import type { OnProgress } from "../store/progress.js";
import type { RunProcess } from "../store/runs.js";
import type { BackupResult } from "./backup.js";
import type { DoctorReport } from "./doctor.js";
import type { OptimizeResult } from "./optimize.js";
import type { PgBackupResult } from "./pg/backup.js";
import type { PgDoctorReport } from "./pg/doctor.js";
import type { PgOptimizeResult } from "./pg/optimize.js";
import type { PgRestoreResult } from "./pg/restore.js";
import type { RestoreResult } from "./restore.js";
import type { WindowReport } from "./window.js";

interface Located {
  home: string;
  profile: string;
  /** backup.keep of the profile's configuration. */
  keep: number;
}

export type MaintenanceTarget =
  | (Located & { backend: "sqlite" })
  | (Located & { backend: "postgres"; url: string; settings: PgSettings });

/** Which backend holds the profile's store (store.url in its configuration, else SQLite). */
export async function maintenanceTarget(
  options: { home?: string | undefined; profile?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<MaintenanceTarget> {
  const { home, profile } = resolveLocation(options, env);
  // Without a config file or HEARTH_* variable this loads no schema (zod).
  const config = await loadConfigLazily({ home, env });
  const keep = config.backup.keep;
  if (config.store.url === undefined) return { backend: "sqlite", home, profile, keep };
  const { storeUrlWithPassword } = await import("../store/pg/password.js");
  // The password from PGPASSWORD or store.passwordFile when the URL has none.
  const url = storeUrlWithPassword(config.store.url, {
    passwordFile: config.store.passwordFile,
    home,
    env,
  });
  return { backend: "postgres", home, profile, keep, url, settings: config.store.pg };
}

/**
 * The read-only diagnosis of the profile's store (M1), on its backend. A
 * configuration that cannot be read names no backend: SQLite's doctor then
 * runs, and reports the configuration as a finding instead of failing.
 */
export async function diagnose(location: {
  home?: string | undefined;
  profile?: string | undefined;
}): Promise<DoctorReport | PgDoctorReport> {
  const target = await maintenanceTarget(location).catch(() => undefined);
  if (target?.backend === "postgres") {
    const { runPgDoctor } = await import("./pg/doctor.js");
    return runPgDoctor(target);
  }
  const { runDoctor } = await import("./doctor.js");
  return runDoctor(target ?? location);
}

/**
 * A worker's presence for run `runId` its launcher recorded, held until the
 * returned function is called (or the process ends): on PostgreSQL what
 * proves the run alive to the schedulers of other hosts, and a refusal
 * (HEARTH_WORKER_ABANDONED) when the run was recorded abandoned before
 * this worker took it. Nothing on SQLite (one host: /proc proves it).
 */
export async function holdRunPresence(
  location: { home?: string | undefined; profile?: string | undefined },
  runId: number,
  self: RunProcess,
): Promise<() => Promise<void>> {
  const target = await maintenanceTarget(location);
  if (target.backend !== "postgres") return async () => undefined;
  const { holdWorkerPresence } = await import("../store/pg/run-presence.js");
  return holdWorkerPresence(target.url, self, runId);
}

/** A verified online backup of the profile's store, on its backend, with its retention. */
export async function backupStore(
  target: MaintenanceTarget,
  options: { keep?: number; dryRun?: boolean; onProgress?: OnProgress } = {},
): Promise<BackupResult | PgBackupResult> {
  const keep = options.keep ?? target.keep;
  if (target.backend === "postgres") {
    const { backupPg } = await import("./pg/backup.js");
    return backupPg({ ...target, ...options, keep });
  }
  const [{ backup }, { openStore }] = await Promise.all([
    import("./backup.js"),
    import("../store/open.js"),
  ]);
  const store = await openStore({ home: target.home, profile: target.profile, role: "reader" });
  try {
    return await backup(store, { ...options, keep });
  } finally {
    await store.close();
  }
}

/**
 * FTS optimize, ANALYZE, VACUUM and a WAL truncate of a SQLite store (the
 * structural gate: refused while another writer lives), or VACUUM (ANALYZE)
 * of hearth's tables on PostgreSQL (beside the live processes).
 */
export async function optimizeStore(
  target: MaintenanceTarget,
  options: { dryRun?: boolean; onProgress?: OnProgress } = {},
): Promise<OptimizeResult | PgOptimizeResult> {
  if (target.backend === "postgres") {
    const { optimizePg } = await import("./pg/optimize.js");
    return optimizePg({ url: target.url, ...options });
  }
  const [{ optimize }, { openStore }] = await Promise.all([
    import("./optimize.js"),
    import("../store/open.js"),
  ]);
  const store = await openStore({
    home: target.home,
    profile: target.profile,
    role: "writer",
    create: false,
  });
  try {
    return await optimize(store, options);
  } finally {
    await store.close();
  }
}

/**
 * HEARTH_UNSUPPORTED_BACKEND, before anything is done, when the profile's
 * store is on PostgreSQL: `what` acts on a SQLite file (state.db), which a
 * PostgreSQL profile does not have; `instead` is the way out.
 */
export async function refuseOnPostgres(
  location: { home?: string | undefined; profile?: string | undefined },
  what: string,
  instead: string,
): Promise<void> {
  const target = await maintenanceTarget(location);
  if (target.backend !== "postgres") return;
  const { maskUrl } = await import("../store/pg/pool.js");
  const resource = maskUrl(target.url);
  throw new HearthError(
    "HEARTH_UNSUPPORTED_BACKEND",
    `${what} works on a SQLite store; the store of profile ${target.profile} is on PostgreSQL (${resource}); nothing was done`,
    { resource, hint: instead },
  );
}

/** What a restore replaces, in words for a confirmation prompt. */
async function targetLabel(target: MaintenanceTarget): Promise<string> {
  if (target.backend === "postgres") {
    const { maskUrl } = await import("../store/pg/pool.js");
    return `the PostgreSQL database ${maskUrl(target.url)}`;
  }
  return `the ${target.profile} store (${databasePath(target.home, target.profile)})`;
}

/**
 * Replace the profile's store with a backup, on its backend: a SQLite file
 * (offline, or `window`: the long-lived processes parked around it), or a
 * PostgreSQL database from a pg_dump (`force`: replace one that holds tables,
 * dumped to backups/forensic/ first). `window` on PostgreSQL is a usage
 * error, and nothing changes; `force` means nothing to a SQLite restore and
 * is ignored there, as it always was. `confirm` is asked, with what would be
 * replaced, after the options are checked and before anything else; it
 * throws to refuse.
 */
export async function restoreStore(
  target: MaintenanceTarget,
  options: {
    from: string;
    dryRun?: boolean;
    window?: boolean;
    force?: boolean;
    onProgress?: OnProgress;
    confirm?: (replacing: string) => Promise<void>;
  },
): Promise<(RestoreResult & { window?: WindowReport }) | PgRestoreResult> {
  const { from, dryRun = false, onProgress } = options;
  if (target.backend === "postgres" && options.window)
    throw new TypeError(
      "--window parks the processes of a SQLite store; on PostgreSQL stop the hearth processes that use the database, then restore",
    );
  await options.confirm?.(await targetLabel(target));
  if (target.backend === "postgres") {
    const { restorePg } = await import("./pg/restore.js");
    return restorePg({ ...target, from, dryRun, force: options.force === true, onProgress });
  }
  const { restore } = await import("./restore.js");
  const run = async (window?: WindowReport) => ({
    ...(await restore({ home: target.home, profile: target.profile, from, dryRun, onProgress })),
    ...(window ? { window } : {}),
  });
  if (!options.window) return run();
  const { withWindow } = await import("./window.js");
  return withWindow(target, "restore", run);
}
