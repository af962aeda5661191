import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { spawnNode, until } from "../helpers/process.js";

// The torture runner, SIGKILLed mid-run, leaves no child running: the
// gateway and the dashboard stop once their parent is gone
// (HEARTH_SUPERVISOR_PID, src/cli/daemon.ts), the store workers too, and
// a child stopped by SIGSTOP at that moment is in an orphaned process
// group of its own, which the kernel sends SIGHUP and SIGCONT.
const SCRIPT = fileURLToPath(new URL("../../torture/run.mjs", import.meta.url));

/** Pids of the processes whose environment names `supervisor` as HEARTH_SUPERVISOR_PID. */
function childrenOf(supervisor: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (env.includes(`HEARTH_SUPERVISOR_PID=${supervisor}`)) found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

let dir = "";
afterEach(() => {
  if (!dir) return;
  try {
    execFileSync("umount", ["-l", `${dir}/disk`], { stdio: "ignore" });
  } catch {
    // not mounted (no tmpfs here)
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("torture runner killed with SIGKILL", () => {
  it("leaves none of its children running, a stopped one included", async () => {
    const runner = spawnNode([SCRIPT, "--seconds", "60", "--seed", "3"]);
    const first = await runner.line((l) => l.startsWith("torture: seed"));
    dir = /store (\S+?)\/(disk\/)?home$/.exec(first)?.[1] ?? "";
    // The gateway and the dashboard are up (both are its children).
    await until(
      "the runner's gateway and dashboard",
      () => childrenOf(runner.pid).length >= 2,
      30_000,
    );
    const children = childrenOf(runner.pid);
    process.kill(children[0]!, "SIGSTOP");
    runner.child.kill("SIGKILL");
    await runner.exited;
    await until(
      "every child of the killed runner to exit",
      () => childrenOf(runner.pid).length === 0,
      20_000,
    );
    expect(childrenOf(runner.pid)).toEqual([]);
  }, 90_000);
});
