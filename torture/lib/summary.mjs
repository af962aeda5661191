// The summary of a torture run: JSON for machines, a table for people.

const pct = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

export function summarize(stats, ledger) {
  const mustBeZero = {
    lost: stats.lost.length,
    duplicated: stats.duplicated.length,
    integrityFailures: stats.integrityFailures.length,
    falseSuccesses: stats.falseSuccesses.length,
    refusalsNamingNoHolder: stats.badRefusals.length,
    staleLockBlocks: stats.staleLockBlocks.length,
    ghostDescriptors: stats.ghostDescriptors.length,
    forensicOverCap: stats.forensicOverCap.length,
    ackedSessionsDeleted: stats.deletedAckedSessions.length,
    sidecarInodeChanges: stats.sidecarInodeChanges.length,
    diskOverBound: stats.diskOverBound.length,
    diskLeaks: stats.diskLeaks.length,
    writesNotResumedAfterFree: stats.writesNotResumed.length,
    // An internal error is a bug: the dashboard's 500s (the runner keeps its log line for the first).
    dashboard500s: Object.entries(stats.dashboard.errors)
      .filter(([key]) => key.startsWith("500"))
      .reduce((n, [, count]) => n + count, 0),
    // issue 41.5: a gateway's 500 (either gateway), a process or profile that
    // never came back after a fault, debris left at the end, a fault kind that never fired.
    gateway500s: Object.entries(stats.gatewayStatus)
      .filter(([key]) => /^(start\/gateway )?500/.test(key))
      .reduce((n, [, count]) => n + count, 0),
    neverRecovered: stats.neverRecovered.length,
    debris: stats.debris.length,
    // issue 41: a scheduler worker killed -9 whose run is neither recorded
    // failed/unknown nor in a ghost copy (fleet-runs.mjs).
    killedWorkersUnrecorded: stats.killedWorkersUnrecorded.length,
    // A short run performs only a prefix of the schedule's opening tour: from
    // REQUIRE_ALL_FAULTS_S seconds on, or with --until-all-faults, every kind must have fired.
    faultKindsNotFired:
      stats.seconds >= REQUIRE_ALL_FAULTS_S || stats.untilAllFaults
        ? faultsNotFired(stats).length
        : 0,
  };
  const acknowledged = {
    gateway: ledger.count("gateway"),
    worker: ledger.count("worker"),
    chat: ledger.count("chat"),
    fleet: ledger.count("fleet"),
    dashboard: ledger.count("dashboard"),
    acp: ledger.count("acp"),
    byProfile: Object.fromEntries(
      ["default", "p1", "p2"].map((p) => [p, ledger.count(undefined, p)]),
    ),
    total: ledger.count(),
  };
  const killed = stats.killed.gateway + stats.killed.dashboard + stats.killed.worker;
  const fired = Object.values(stats.failpoints).reduce((n, f) => n + f.fired, 0);
  const didWork =
    acknowledged.gateway > 0 &&
    acknowledged.worker > 0 &&
    stats.checks > 0 &&
    stats.dashboard.ok > 0;
  return {
    seed: stats.seed,
    seconds: stats.seconds,
    untilAllFaults: stats.untilAllFaults,
    elapsedMs: stats.elapsedMs,
    pass: didWork && Object.values(mustBeZero).every((n) => n === 0),
    didWork,
    mustBeZero,
    acknowledged,
    processesKilled: {
      total: killed + fired,
      ...stats.killed,
      byFailpoint: fired,
    },
    failpoints: stats.failpoints,
    stops: stats.stops,
    strayDescriptorRuns: stats.strays,
    strayInsideWorker: stats.strayInside,
    workers: stats.workers,
    structural: stats.structural,
    ddl: stats.ddl,
    chat: stats.chat,
    restores: stats.restores,
    backupsVerified: stats.backupsVerified,
    drills: stats.drills,
    disk: {
      ...stats.disk,
      resumeMs: { n: stats.disk.resumeMs.length, max: pct(stats.disk.resumeMs, 100) },
    },
    sidecarSamples: stats.sidecarSamples,
    notExercised: notExercised(stats),
    cli: stats.cli,
    checks: stats.checks,
    fileOnlyRereads: stats.fileOnlyRereads,
    restartMs: {
      n: stats.restartMs.length,
      p50: pct(stats.restartMs, 50),
      max: pct(stats.restartMs, 100),
    },
    gatewayStatus: stats.gatewayStatus,
    dashboard: stats.dashboard,
    fleet: stats.fleet,
    faults: stats.faults,
    faultKindsNotFired: faultsNotFired(stats),
    lostReported: stats.lostReported.length,
    acp: stats.acp,
    dashboardChat: stats.dashboardChat,
    unexpectedExits: stats.unexpectedExits.length,
    actions: stats.actions,
    actionsDropped: stats.actionsDropped,
  };
}

/** From this run length on, a fault kind of issue 41.5 that never fired fails the run. */
export const REQUIRE_ALL_FAULTS_S = 120;

/** The fault kinds of issue 41.5 that never fired in this run: each one fails it (runs of 120 s and more). */
export function faultsNotFired(stats) {
  const f = stats.fleet;
  const x = stats.faults;
  const out = [];
  if (f.killed.supervisor === 0) out.push("kill -9 of hearth start");
  if (f.killed.gateway + f.killed.scheduler + f.killed.dashboard === 0)
    out.push("kill -9 of a child of hearth start");
  if (f.killed.worker === 0) out.push("kill -9 of a scheduler worker mid-job");
  if (!x.strayInside.gateway) out.push("stray descriptor inside a gateway");
  if (!x.strayInside.dashboard) out.push("stray descriptor inside a dashboard");
  if (Object.values(x.walDeleted).reduce((a, b) => a + b, 0) === 0)
    out.push("-wal and -shm deleted under live processes");
  if (x.damage.detected === 0) out.push("a page damaged for real (seen by integrity_check)");
  if (x.damage.repaired === 0) out.push("repair of a damaged store");
  if (stats.acp.turns === 0) out.push("an acknowledged hearth acp prompt");
  if (stats.dashboardChat.acked === 0) out.push("an acknowledged dashboard chat message");
  return out;
}

/** What this run did not exercise, each with why: a zero here is not a pass of that row. */
function notExercised(stats) {
  const out = [];
  if (stats.disk.notExercised) out.push(`disk fill: ${stats.disk.notExercised}`);
  else if (stats.disk.fills === 0) out.push("disk fill: none scheduled in this run");
  for (const [name, f] of Object.entries(stats.failpoints))
    if (f.fired === 0) out.push(`failpoint ${name}: ${f.armed} armed, none fired`);
  if (stats.structural.refused === 0)
    out.push("no structural command was refused (exit 3 not checked)");
  if (stats.ddl.tried === 0) out.push("no worker ran DDL");
  if (stats.chat.turns === 0) out.push("no hearth chat turn answered");
  if (!stats.chat.handoffs["handoff.completed"]) out.push("no chat handoff completed");
  if (stats.restores === 0) out.push("no restore into a scratch home");
  if (stats.backupsVerified === 0) out.push("no backup file verified");
  return out;
}

export function printSummary(summary, stats, _ledger) {
  const w = (s) => process.stdout.write(`${s}\n`);
  w("");
  w(`torture summary (seed ${summary.seed}, ${(summary.elapsedMs / 1000).toFixed(1)} s)`);
  w(
    `  acknowledged writes     ${summary.acknowledged.total} (gateway ${summary.acknowledged.gateway}, workers ${summary.acknowledged.worker}, chat ${summary.acknowledged.chat}, start's gateway ${summary.acknowledged.fleet}, dashboard chat ${summary.acknowledged.dashboard}, acp ${summary.acknowledged.acp}; by profile ${JSON.stringify(summary.acknowledged.byProfile)})`,
  );
  w(
    `  processes killed        ${summary.processesKilled.total} (gateway ${stats.killed.gateway}, dashboard ${stats.killed.dashboard}, worker ${stats.killed.worker}, by failpoint ${summary.processesKilled.byFailpoint})`,
  );
  for (const [name, f] of Object.entries(stats.failpoints))
    w(`  failpoint ${name.padEnd(22)}${f.fired} fired of ${f.armed} armed`);
  w(
    `  SIGSTOP/SIGCONT         ${summary.stops}; stray descriptor runs ${summary.strayDescriptorRuns} outside, ${summary.strayInsideWorker} inside a worker`,
  );
  w(
    `  workers                 ${summary.workers.started} started, ${summary.workers.finished} finished, ${summary.workers.refused} refused`,
  );
  w(
    `  structural ops          ${summary.structural.run} run, ${summary.structural.refused} refused (exit 3, each naming a holder)`,
  );
  w(
    `  worker DDL              ${stats.ddl.tried} tried, ${stats.ddl.ran} ran, ${stats.ddl.refused} refused naming holders`,
  );
  w(
    `  hearth chat             ${stats.chat.runs} runs, ${stats.chat.turns} turns answered, handoffs ${JSON.stringify(stats.chat.handoffs)}`,
  );
  w(
    `  backups / restores      ${stats.backupsVerified} backup files verified against the ledger, ${stats.restores} restored into a scratch home`,
  );
  w(
    `  drills on scratch       repair.mid-promote ${stats.drills.repair} completed, migrate.mid-migration ${stats.drills.migrate} completed, ${stats.drills.skipped} skipped`,
  );
  w(
    `  disk                    ${stats.disk.mounted ? `${stats.disk.fills} fills, writes resumed after each (max ${summary.disk.resumeMs.max ?? "-"} ms)` : "not mounted"}; max use ${(stats.disk.maxUse / 2 ** 20).toFixed(1)} MiB (bound ${(stats.disk.maxBound / 2 ** 20).toFixed(1)} MiB)`,
  );
  w(`  sidecar inode samples   ${stats.sidecarSamples}`);
  w(
    `  restart after kill -9   n=${summary.restartMs.n} p50 ${summary.restartMs.p50} ms, max ${summary.restartMs.max} ms`,
  );
  w(`  checks                  ${summary.checks}`);
  if (stats.fileOnlyRereads.length > 0)
    w(
      `  file-only reads re-read ${stats.fileOnlyRereads.length} (a read of the database file alone, -wal/-shm missing, lacked something; only the re-read counts): ${JSON.stringify(stats.fileOnlyRereads.slice(0, 5))}`,
    );
  w(
    `  actions                 ${JSON.stringify(stats.actions)}${stats.actionsDropped ? `; ${stats.actionsDropped} dropped (due after ${stats.untilAllFaults ? "every fault kind fired or " : ""}the run's time was up)` : ""}`,
  );
  w(
    `  dashboard requests      ${summary.dashboard.requests} (${summary.dashboard.ok} ok; ${summary.dashboard.writes} row writes) ${JSON.stringify(summary.dashboard.errors)}`,
  );
  for (const [key, message] of Object.entries(summary.dashboard.firstMessages ?? {}))
    w(`    first ${key}: ${message}`);
  if (summary.dashboard.firstFailureLog)
    w(`    its log for the first 500 HEARTH_INTERNAL: ${summary.dashboard.firstFailureLog}`);
  w(`  cli exits               ${JSON.stringify(summary.cli)}`);
  w(`  gateway answers         ${JSON.stringify(summary.gatewayStatus)}`);
  const f = stats.fleet;
  const x = stats.faults;
  w(
    `  hearth start            ${f.starts} starts (${f.refused78} after a loud exit 78); kill -9 of supervisor ${f.killed.supervisor}, its gateway ${f.killed.gateway}, scheduler ${f.killed.scheduler}, dashboard ${f.killed.dashboard}, scheduler workers mid-job ${f.killed.worker} (${f.workerKillsMissed} found none)`,
  );
  w(
    `  scheduler runs          ${JSON.stringify(f.runs)}; killed workers not recorded ${stats.killedWorkersUnrecorded.length}`,
  );
  w(
    `  WAL deleted             ${JSON.stringify(x.walDeleted)} (${x.walDeleteSkipped} skipped, no -wal); loud loss reports ${stats.lostReported.length} writes`,
  );
  w(`  damage + repair         ${JSON.stringify(x.damage)}`);
  w(
    `  stray inside daemons    ${JSON.stringify(x.strayInside)} (${x.strayInsideMissed} not answered)`,
  );
  w(
    `  hearth acp              ${stats.acp.runs} runs, ${stats.acp.turns} prompts acknowledged, ${stats.acp.killed} killed mid-prompt ${JSON.stringify(stats.acp.other)}`,
  );
  w(
    `  dashboard chat          ${stats.dashboardChat.sent} sent, ${stats.dashboardChat.acked} acknowledged ${JSON.stringify(stats.dashboardChat.answers)}`,
  );
  w(`  recovery after faults   n=${x.recoverMs.length} max ${pct(x.recoverMs, 100) ?? "-"} ms`);
  for (const k of summary.faultKindsNotFired)
    w(
      `  NOT FIRED: ${k}${stats.seconds < REQUIRE_ALL_FAULTS_S && !stats.untilAllFaults ? " (a short run: not a failure)" : ""}`,
    );
  w(`  unexpected exits        ${summary.unexpectedExits} (not a must-be-0 row; listed below)`);
  for (const [row, n] of Object.entries(summary.mustBeZero))
    w(`  ${row.padEnd(27)}${n}${n ? "   <-- MUST BE 0" : ""}`);
  w(
    `  result                  ${summary.pass ? "PASS" : summary.didWork ? "FAIL" : "FAIL (did no real work)"}`,
  );
  const detail = {
    lost: stats.lost,
    duplicated: stats.duplicated,
    integrityFailures: stats.integrityFailures,
    falseSuccesses: stats.falseSuccesses,
    refusalsNamingNoHolder: stats.badRefusals,
    staleLockBlocks: stats.staleLockBlocks,
    ghostDescriptors: stats.ghostDescriptors,
    forensicOverCap: stats.forensicOverCap,
    ackedSessionsDeleted: stats.deletedAckedSessions,
    sidecarInodeChanges: stats.sidecarInodeChanges,
    diskOverBound: stats.diskOverBound,
    diskLeaks: stats.diskLeaks,
    writesNotResumedAfterFree: stats.writesNotResumed,
    neverRecovered: stats.neverRecovered,
    debris: stats.debris,
    killedWorkersUnrecorded: stats.killedWorkersUnrecorded,
    lostReported: stats.lostReported,
    unexpectedExits: stats.unexpectedExits,
  };
  for (const [row, items] of Object.entries(detail)) {
    if (items.length === 0) continue;
    w(`--- ${row} (${items.length}; seed ${summary.seed}) ---`);
    for (const item of items.slice(0, 20))
      w(`  ${typeof item === "string" ? item : JSON.stringify(item)}`);
  }
  for (const line of summary.notExercised) w(`  not exercised: ${line}`);
  w(`SUMMARY ${JSON.stringify(summary)}`);
}
