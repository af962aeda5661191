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
  };
  const acknowledged = {
    gateway: ledger.count("gateway"),
    worker: ledger.count("worker"),
    total: ledger.count(),
  };
  const killed = stats.killed.gateway + stats.killed.dashboard + stats.killed.worker;
  const didWork =
    acknowledged.gateway > 0 &&
    acknowledged.worker > 0 &&
    stats.checks > 0 &&
    stats.dashboard.ok > 0;
  return {
    seed: stats.seed,
    seconds: stats.seconds,
    elapsedMs: stats.elapsedMs,
    pass: didWork && Object.values(mustBeZero).every((n) => n === 0),
    didWork,
    mustBeZero,
    acknowledged,
    processesKilled: {
      total: killed + stats.failpointsFired,
      ...stats.killed,
      byFailpoint: stats.failpointsFired,
    },
    failpointsArmed: stats.failpointsArmed,
    stops: stats.stops,
    strayDescriptorRuns: stats.strays,
    strayInsideWorker: stats.strayInside,
    workers: stats.workers,
    structural: stats.structural,
    cli: stats.cli,
    checks: stats.checks,
    restartMs: {
      n: stats.restartMs.length,
      p50: pct(stats.restartMs, 50),
      max: pct(stats.restartMs, 100),
    },
    gatewayStatus: stats.gatewayStatus,
    dashboard: stats.dashboard,
    unexpectedExits: stats.unexpectedExits.length,
    actions: stats.actions,
  };
}

export function printSummary(summary, stats, _ledger) {
  const w = (s) => process.stdout.write(`${s}\n`);
  w("");
  w(`torture summary (seed ${summary.seed}, ${(summary.elapsedMs / 1000).toFixed(1)} s)`);
  w(
    `  acknowledged writes     ${summary.acknowledged.total} (gateway ${summary.acknowledged.gateway}, workers ${summary.acknowledged.worker})`,
  );
  w(
    `  processes killed        ${summary.processesKilled.total} (gateway ${stats.killed.gateway}, dashboard ${stats.killed.dashboard}, worker ${stats.killed.worker}, by failpoint ${stats.failpointsFired} of ${stats.failpointsArmed} armed)`,
  );
  w(
    `  SIGSTOP/SIGCONT         ${summary.stops}; stray descriptor runs ${summary.strayDescriptorRuns} outside, ${summary.strayInsideWorker} inside a worker`,
  );
  w(
    `  workers                 ${summary.workers.started} started, ${summary.workers.finished} finished, ${summary.workers.refused} refused`,
  );
  w(
    `  structural ops          ${summary.structural.run} run, ${summary.structural.refused} refused (exit 3)`,
  );
  w(
    `  restart after kill -9   n=${summary.restartMs.n} p50 ${summary.restartMs.p50} ms, max ${summary.restartMs.max} ms`,
  );
  w(`  checks                  ${summary.checks}`);
  w(`  dashboard requests      ${summary.dashboard.requests} (${summary.dashboard.ok} ok)`);
  w(`  cli exits               ${JSON.stringify(summary.cli)}`);
  w(`  gateway answers         ${JSON.stringify(summary.gatewayStatus)}`);
  w(`  unexpected exits        ${summary.unexpectedExits} (not a must-be-0 row; listed below)`);
  for (const [row, n] of Object.entries(summary.mustBeZero))
    w(`  ${row.padEnd(24)}${n}${n ? "   <-- MUST BE 0" : ""}`);
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
    unexpectedExits: stats.unexpectedExits,
  };
  for (const [row, items] of Object.entries(detail)) {
    if (items.length === 0) continue;
    w(`--- ${row} (${items.length}; seed ${summary.seed}) ---`);
    for (const item of items.slice(0, 20))
      w(`  ${typeof item === "string" ? item : JSON.stringify(item)}`);
  }
  w(`SUMMARY ${JSON.stringify(summary)}`);
}
