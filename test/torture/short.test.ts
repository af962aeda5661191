import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../helpers/process.js";

// The torture run (torture/run.mjs, docs/reliability.md) with a fixed seed,
// until every fault kind has fired (--until-all-faults: the schedule's
// opening tour and the drawn actions between), 90 s at most: a gateway
// under load, a dashboard, workers, maintenance, kill -9, failpoints, stray
// descriptors and SIGSTOP on one store, and `hearth start` supervising two
// more profiles with a scheduler, with the first faults of issue 41.5
// (kill -9 of the supervisor, its children and scheduler workers; stray
// descriptors inside the daemons; a WAL deleted under them; dashboard chat
// and `hearth acp` writes). The must-be-0 rows are counts, never times, so
// a loaded machine only makes it do less work, which the "did real work"
// assertions bound from below; and every fault kind fired, which a loaded
// machine takes longer to reach (a fixed 50 s run at load 10 performed 20
// actions; at 30 s three kinds were still missing), so the run lasts until
// then rather than a fixed time. At most 150 s: a clean-clone CI (npm test
// 932 s, a slow machine) reached the 90 s the cap was before with the live
// damage skipped once (no index page free of the WAL for 20 s) and the
// tour's second damage still ahead; a quiet machine ends in 30-75 s.
const SCRIPT = fileURLToPath(new URL("../../torture/run.mjs", import.meta.url));
const SECONDS = 150;
const SEED = 42;

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("torture run (short)", () => {
  it(
    `loses, duplicates and corrupts nothing under every fault kind, seed ${SEED}`,
    async () => {
      dir = mkdtempSync(join(tmpdir(), "hearth-torture-test-"));
      const out = join(dir, "summary.json");
      const r = await run(process.execPath, [
        SCRIPT,
        "--seconds",
        String(SECONDS),
        "--seed",
        String(SEED),
        "--until-all-faults",
        "--json",
        out,
      ]);
      console.log(r.stdout.split("\nSUMMARY ")[0]);
      const summary = JSON.parse(readFileSync(out, "utf8"));
      // Every fault kind of issue 41.5 fired (also a must-be-0 row below).
      expect(summary.faultKindsNotFired).toEqual([]);
      for (const [row, n] of Object.entries(summary.mustBeZero))
        expect({ row, n }).toEqual({ row, n: 0 });
      expect(summary.acknowledged.gateway).toBeGreaterThan(0);
      expect(summary.acknowledged.worker).toBeGreaterThan(0);
      expect(summary.processesKilled.total).toBeGreaterThan(0);
      expect(summary.checks).toBeGreaterThan(1);
      expect(summary.dashboard.ok).toBeGreaterThan(0);
      // The supervised profiles were written through hearth start's gateway.
      expect(summary.acknowledged.fleet).toBeGreaterThan(0);
      expect(summary.fleet.starts).toBeGreaterThanOrEqual(1);
      expect(summary.pass).toBe(true);
      expect(r.code, r.stderr).toBe(0);
    },
    (SECONDS + 120) * 1000,
  );
});
