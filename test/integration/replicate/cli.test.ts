import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import type { Child } from "../../helpers/process.js";
import { replicaConfig, rows } from "../../helpers/replica.js";
import { startWorker } from "../../helpers/worker.js";

const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill("SIGKILL");
});

/**
 * A home replicating to the directory target "offsite" (every 50 ms) from a
 * worker process that appended `count` messages to a session titled `title`
 * and shipped them.
 */
async function replicating(title: string, count: number) {
  const home = tempHome();
  const config = replicaConfig(mkdtempSync(join(tmpdir(), "hearth-target-")), { intervalMs: 50 });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify(config), { mode: 0o600 });
  const setup = await openStore({ home });
  const session = await setup.sessions.create({ title });
  await setup.close();
  const w = await startWorker();
  children.push(w.process);
  await w.call("open", { home });
  await w.call("replicate", { home });
  await w.call("appendLoop", { sessionId: session.id, prefix: title[0], count });
  await w.call("replicationTick");
  return { home, w, session };
}

describe("hearth restore --from and doctor's replication finding", () => {
  it("restores into a new home, verified; refuses a non-empty one; --at before the first snapshot finds none", async () => {
    const startedAt = Date.now();
    const { home, w } = await replicating("cli", 30);

    const doctor = await runCli(["--json", "doctor"], { home });
    const finding = doctor.json().findings.find((f: { code: string }) => f.code === "replication");
    expect(finding.severity).toBe("ok");
    expect(finding.message).toMatch(/^replicating to offsite: lag/);

    const into = join(mkdtempSync(join(tmpdir(), "hearth-new-")), "home");
    const restored = await runCli(["--json", "restore", "--from", "offsite", "--into", into], {
      home,
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json().counts.messages).toBe(30);
    expect(rows(join(into, "state.db"))).toEqual(rows(join(home, "state.db")));

    const again = await runCli(["--json", "restore", "--from", "offsite", "--into", into], {
      home,
    });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("HEARTH_DESTINATION_NOT_EMPTY");

    const early = join(mkdtempSync(join(tmpdir(), "hearth-new-")), "home");
    const none = await runCli(
      [
        "--json",
        "restore",
        "--from",
        "offsite",
        "--into",
        early,
        "--at",
        String(startedAt - 60_000),
      ],
      { home },
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("HEARTH_REPLICA_GAP");

    await w.call("close");
    const unknown = await runCli(["--json", "restore", "--from", "elsewhere", "--into", early], {
      home,
    });
    expect(unknown.stderr).toContain("HEARTH_TARGET_UNKNOWN");
  });

  it("restores over the live store (no --into): refused while a process holds it, then the replica replaces what came after", async () => {
    const { home, w, session } = await replicating("over", 20);
    const replicated = rows(join(home, "state.db"));
    // Offline restore: a live holder refuses it (exit 3), the store untouched.
    const held = await runCli(["--json", "restore", "--from", "offsite", "--yes"], { home });
    expect(held.code).toBe(3);
    await w.call("close");
    // Written after the last shipment and with nobody replicating: not in the replica.
    const later = await openStore({ home });
    await later.messages.append(session.id, { role: "user", content: "never shipped" });
    await later.close();
    expect(rows(join(home, "state.db"))).not.toEqual(replicated);

    const restored = await runCli(["--json", "restore", "--from", "offsite", "--yes"], { home });
    expect(restored.code, restored.stderr).toBe(0);
    expect(rows(join(home, "state.db"))).toEqual(replicated);
    const check = await openStore({ home });
    expect((await check.messages.load(session.id)).map((m) => m.content)).not.toContain(
      "never shipped",
    );
    await check.close();
  });

  it("backup --to copies the verified backup to a target, read back and compared", async () => {
    const home = tempHome();
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, "config.json"), JSON.stringify(replicaConfig(dir)), { mode: 0o600 });
    const store = await openStore({ home });
    await store.sessions.create({ title: "backed up" });
    await store.close();
    const r = await runCli(["--json", "backup", "--to", "offsite"], { home });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.copied.key).toBe(`default/backups/${basename(out.path)}`);
    expect(readFileSync(join(dir, out.copied.key))).toEqual(readFileSync(out.path));
  });
});
