import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

interface Finding {
  code: string;
  severity: string;
  message: string;
}

async function doctor(home: string): Promise<{ code: number | null; findings: Finding[] }> {
  const r = await runCli(["--json", "doctor"], { home });
  return { code: r.code, findings: r.json<{ findings: Finding[] }>().findings };
}

const synchronous = (findings: Finding[]) => findings.find((f) => f.code === "synchronous")!;

describe("durability is read back from SQLite, never echoed from the configuration (C2)", () => {
  it.each([
    "off",
    "normal",
    "full",
    "extra",
  ] as const)("durability() reports the level SQLite runs the writer at: %s", async (level) => {
    const home = tempHome();
    const store = await openSqliteStore({ home, config: { durability: { synchronous: level } } });
    expect((await store.durability()).synchronous).toEqual({ configured: level, actual: level });
    expect(store.warnings).toEqual([]);
    await store.close();
  });

  it("doctor names each live writer's level as that writer read it back", async () => {
    const home = tempHome();
    writeConfig(home, { durability: { synchronous: "full" } });
    (await openStore({ home })).close();
    const writer = await startWorker();
    await writer.call("open", { home });
    const ok = synchronous((await doctor(home)).findings);
    expect(ok.severity).toBe("ok");
    expect(ok.message).toContain(
      `pid ${writer.pid} full (checkpoints off the event loop, fsync when it pays)`,
    );
    expect(ok.message).toContain("a new connection reads back full");

    // A writer that runs at another level than config.json says is a warning naming it.
    const lax = await startWorker();
    await lax.call("open", { home, config: { durability: { synchronous: "normal" } } });
    const report = await doctor(home);
    const drift = synchronous(report.findings);
    expect(drift.severity).toBe("warning");
    expect(drift.message).toContain(`pid ${lax.pid} normal (checkpoints off the event loop)`);
    expect(report.code).toBe(4);
  });

  it("doctor says which writers sync inside the commit (durability.syncOffLoop false)", async () => {
    const home = tempHome();
    (await openStore({ home })).close();
    const writer = await startWorker();
    await writer.call("open", { home, config: { durability: { syncOffLoop: false } } });
    const finding = synchronous((await doctor(home)).findings);
    expect(finding.message).toContain(`pid ${writer.pid} full (syncs inside the commit)`);
  });
});
