import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { GATE_OFFSET } from "../../../src/process/lock-map.js";
import { readKernelLocks } from "../../../src/process/proc-locks.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

// The writer's side of the structural gate (P4): a process that opens a
// store as a writer holds the gate byte shared for as long as it is open
// (InodeLocks.enterWriter), so structural work in another process is refused
// at the gate itself, and a writer arriving while structural work holds the
// gate does not get in. The holder census would also refuse structural work
// while a writer is open; these tests look at the gate alone.

/** The kernel's locks on the store's gate byte, by access ("READ": shared). */
function gateLocks(path: string): string[] {
  const st = statSync(path);
  return readKernelLocks(path)
    .filter((l) => l.inode === st.ino && l.start <= GATE_OFFSET && GATE_OFFSET <= l.end)
    .map((l) => l.access);
}

async function seeded(): Promise<{ home: string; path: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "gate" });
  for (let i = 0; i < 20; i++)
    await store.messages.append(s.id, { role: "user", content: `m${i}` });
  await store.close();
  return { home, path: store.path };
}

async function openWorker(home: string, config?: unknown): Promise<Worker> {
  const w = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
  await w.call("open", { home, config });
  return w;
}

describe("the writer's side of the structural gate (P4)", () => {
  it("a writer holds the gate shared from open to close; structural work elsewhere is refused at the gate", async () => {
    const { home, path } = await seeded();
    expect(gateLocks(path)).toEqual([]);
    const writer = await openWorker(home);
    expect(gateLocks(path)).toEqual(["READ"]);

    const r = await runCli(["--json", "sessions", "optimize"], { home });
    expect(r.code, r.stdout).toBe(3);
    const error = JSON.parse(r.stderr).error;
    expect(error.code).toBe("HEARTH_STORE_HELD");
    // The gate was refused (not only the census's later look at the holders).
    expect(error.message).toContain("another process holds the structural gate");
    expect(error.details.holders.map((h: { pid: number }) => h.pid)).toContain(writer.pid);

    await writer.call("close");
    expect(gateLocks(path)).toEqual([]);
    const ok = await runCli(["--json", "sessions", "optimize"], { home });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("while structural work holds the gate, a writer is refused (HEARTH_MAINTENANCE_RUNNING), a waiting one gets in after", async () => {
    const { home } = await seeded();
    const surgeon = await openWorker(home);
    await surgeon.call("beginSurgery");

    const late = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    const refused = await late.request("open", { home, config: { store: { gateWaitMs: 0 } } });
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe("HEARTH_MAINTENANCE_RUNNING");
    expect(refused.error?.message).toContain(`pid ${surgeon.pid}`);

    // One that may wait (a minute: far longer than this test needs) opens once the work ends.
    const waiting = late.call("open", { home, config: { store: { gateWaitMs: 60_000 } } });
    await surgeon.call("endSurgery");
    await waiting;
    const session = await late.call<{ id: string }>("create", { title: "after surgery" });
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
