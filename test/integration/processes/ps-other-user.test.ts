import { spawnSync } from "node:child_process";
import { chmodSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PsReport } from "../../../src/ops/ps.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { run } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

const NOBODY = { uid: 65534, gid: 65534 };

/** Why this machine cannot run the test, or undefined when it can. */
function cannotRunAsNobody(): string | undefined {
  if (process.platform !== "linux") return "needs Linux /proc";
  if (process.getuid?.() !== 0) return "needs root to run the CLI as user nobody (uid 65534)";
  const id = spawnSync("id", ["-u"], { ...NOBODY, encoding: "utf8" });
  if (id.status !== 0 || id.stdout.trim() !== "65534") {
    return `cannot start a process as uid 65534: ${id.error?.message ?? id.stderr}`;
  }
  const help = spawnSync(process.execPath, [CLI, "--help"], { ...NOBODY, encoding: "utf8" });
  if (help.status !== 0) {
    return `user nobody cannot run ${process.execPath} ${CLI} (exit ${help.status}): ${help.error?.message ?? help.stderr.trim()}`;
  }
  return undefined;
}

const skipReason = cannotRunAsNobody();
if (skipReason) console.warn(`ps-other-user.test.ts skipped: ${skipReason}`);

const runAsNobody = (command: string, args: string[]) => run(command, args, NOBODY);

describe("hearth ps as a user who cannot read the holder's descriptor table", () => {
  it.skipIf(skipReason !== undefined)(
    `names a root worker from its presence lock alone${skipReason ? ` (skipped: ${skipReason})` : ""}`,
    async () => {
      const home = tempHome();
      const db = join(home, "state.db");
      const worker = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
      await worker.call("open", { home });

      // hearth made the home 0700 and the files 0600: let nobody traverse and stat them.
      chmodSync(dirname(home), 0o711);
      chmodSync(home, 0o711);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) chmodSync(f, 0o644);
      expect(statSync(db).uid).toBe(0);
      expect(readdirSync(`/proc/${worker.pid}/fd`).length).toBeGreaterThan(0); // root can

      // The premise: nobody really cannot read the worker's descriptor table or markers...
      const ls = await runAsNobody("ls", [`/proc/${worker.pid}/fd`]);
      expect(ls.code).not.toBe(0);
      expect(ls.stderr).toMatch(/Permission denied/);
      const run = await runAsNobody("ls", [join(home, "run")]);
      expect(run.code).not.toBe(0);
      // ...but can read the kernel's lock table.
      const locks = await runAsNobody("cat", ["/proc/locks"]);
      expect(locks.code).toBe(0);

      const r = await runCli(["ps", "--json"], { home, ...NOBODY });
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as PsReport;
      expect(report.profiles).toHaveLength(1);
      const p = report.profiles[0]!;
      expect(p).toMatchObject({ profile: "default", path: db, exists: true, ghosts: [] });
      expect(p.holders).toHaveLength(1);
      const holder = p.holders[0]!;
      expect(holder).toMatchObject({
        pid: worker.pid,
        kind: "worker",
        files: [db, `${db}-shm`],
        // Its marker sits in the root-only run directory.
        marker: null,
      });
      expect(holder.roles).toContain("writer");
      expect(holder.commandLine).toContain("store-worker.mjs");
      // Every OFD lock is accounted for by the presence it names: nothing unexplained.
      expect(p.unexplainedLocks).toBe(0);
      // And ps says it could not look for ghosts in the worker.
      expect(p.uninspected).toContain(worker.pid);

      const text = await runCli(["ps"], { home, ...NOBODY });
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^ +${worker.pid} +worker +reader,writer `, "m"));
      expect(text.stdout).toMatch(
        new RegExp(`could not look for deleted generations in pids .*\\b${worker.pid}\\b`),
      );
      expect(text.stdout).not.toContain("cannot name");
    },
  );
});
