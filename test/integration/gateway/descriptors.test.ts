import { readdirSync, readlinkSync } from "node:fs";
import { expect, it } from "vitest";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

const PROFILES = 20;

/** What a process's descriptors point at, from /proc/<pid>/fd (closed ones skipped). */
function targets(pid: number): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed while we looked
    }
  }
  return out;
}

// One gateway serving many profiles pays its descriptors per profile: for
// each database, SQLite's (the writer's and the reader's connections, one
// shared -shm), the file guard's (-wal, -shm: F2/F3; on the database it
// borrows the kernel locks' descriptor) and the kernel-held locks'
// (presence, gate, write and gateway locks, one read-write descriptor since
// the reader presence moved onto it). Counted, never timed: 5 on each
// database file before, 4 with the presence on the read-write descriptor,
// 3 with the guard borrowing it, 2 once the read-only connection opens only
// when a read needs it (the gateway's per-profile checks at start and on
// timers are probes: src/store/sqlite/access.ts). The park socket is one
// per process.
it("a gateway serving 20 idle profiles holds 2 descriptors on each database and 6 on its files", async () => {
  const home = tempHome();
  const profiles = Array.from({ length: PROFILES }, (_, i) => `p${i}`);
  const gateway = await startGateway(home, { profiles });
  const open = targets(gateway.pid);
  for (const profile of profiles) {
    const db = `${home}/profiles/${profile}/state.db`;
    const on = (suffix: string) => open.filter((t) => t === db + suffix).length;
    expect({ profile, db: on(""), wal: on("-wal") }).toEqual({ profile, db: 2, wal: 2 });
    expect(on("") + on("-wal") + on("-shm")).toBeLessThanOrEqual(6);
  }
  // Sockets: stdio, the HTTP listener, one park socket; none per profile (21 before).
  expect(open.filter((t) => t.startsWith("socket:")).length).toBeLessThan(PROFILES / 2);
  await gateway.kill("SIGTERM");
});
