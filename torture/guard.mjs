// The torture runner's guard: a small process of its own that outlives a
// SIGKILLed runner. Once the runner's pid is gone, it SIGKILLs every process
// whose environment names the runner as HEARTH_SUPERVISOR_PID (a SIGSTOPped
// one included, which cannot notice its parent died; in a container the
// kernel's orphaned-group SIGHUP does not come either), then unmounts the
// run's tmpfs. A runner that ends normally has ended its children itself.
//
//   node torture/guard.mjs <runner pid> [<tmpfs mount point>]
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const runner = Number(process.argv[2]);
const mnt = process.argv[3];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code !== "ESRCH";
  }
};

function children() {
  const mark = `HEARTH_SUPERVISOR_PID=${runner}`;
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "utf8").split("\0").includes(mark))
        found.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

while (alive(runner)) await sleep(300);
for (let round = 0; round < 50; round++) {
  const left = children();
  if (left.length === 0) break;
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  await sleep(100);
}
if (mnt) {
  try {
    execFileSync("umount", ["-l", mnt], { stdio: "ignore" });
  } catch {
    // already unmounted by the runner
  }
}
