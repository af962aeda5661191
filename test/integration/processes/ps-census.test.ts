import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { PsReport } from "../../../src/ops/ps.js";
import { CLI } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { run, until } from "../../helpers/process.js";

const PROFILES = 50;

/** Paths `hearth ps` opened, from an strace -f log of openat calls. */
function opened(trace: string): string[] {
  return [...trace.matchAll(/openat\(AT_FDCWD, "([^"]+)"/g)].map((m) => m[1]!);
}

// One gateway serving 50 profiles holds every database: ps used to read its
// descriptor table (and /proc/locks) once per profile. Counted with strace,
// never timed: one read of each, however many profiles.
it("hearth ps reads /proc/locks and each holder's descriptor table once for a home of 50 served profiles", async () => {
  const home = tempHome();
  const profiles = Array.from({ length: PROFILES }, (_, i) => `p${i}`);
  const gateway = await startGateway(home, { profiles });
  // Every profile's writer and reader presence is up (a clean-clone CI run once saw one
  // profile's writer presence missing from the first ps after ready; issue 44 follow-up).
  await until(
    "every profile shows the gateway as reader and writer",
    async () => {
      const ps = await run(process.execPath, [CLI, "--home", home, "--json", "ps"]);
      if (ps.code !== 0) return false;
      return (JSON.parse(ps.stdout) as PsReport).profiles.every(
        (p) => p.holders[0]?.roles.join(",") === "reader,writer",
      );
    },
    60_000,
  );

  const out = join(home, "..", "ps-trace.txt");
  const r = await run("strace", [
    ...["-f", "-e", "trace=openat", "-o", out],
    ...[process.execPath, CLI, "--home", home, "--json", "ps"],
  ]);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as PsReport;
  expect(report.profiles.map((p) => p.profile).sort()).toEqual([...profiles].sort());
  for (const p of report.profiles) {
    expect(p.holders.map((h) => h.pid)).toEqual([gateway.pid]);
    expect(p.holders[0]).toMatchObject({ kind: "gateway", roles: ["reader", "writer"] });
    expect(p.ghosts).toEqual([]);
  }

  const paths = opened(readFileSync(out, "utf8"));
  const count = (path: string) => paths.filter((p) => p === path).length;
  // One census for every profile: /proc/locks, the holder's descriptor table
  // and its command line read once each, not once per profile. A profile
  // whose census shows a lock no presence explains yet (a busy machine) is
  // read again in new whole censuses (readHoldersSettled, at most 5), each
  // reading the three once more: a clean-clone CI run counted 6.
  const censuses = count("/proc/locks");
  expect(censuses).toBeGreaterThanOrEqual(1);
  expect(censuses).toBeLessThan(profiles.length / 2);
  expect(count(`/proc/${gateway.pid}/fd`)).toBe(censuses);
  expect(count(`/proc/${gateway.pid}/cmdline`)).toBe(censuses);
});
