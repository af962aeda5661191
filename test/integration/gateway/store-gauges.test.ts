/**
 * The gauges of /metrics an operator alerts on, on a real gateway, read
 * from the kernel and the store at each scrape: free bytes of the store's
 * filesystem, database and WAL sizes, the oldest other reader's age, the
 * newest backup's age (-1 before any), open descriptors, turns in flight.
 */
import { statfsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { metric, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";

const GATE_HOLDER = fileURLToPath(new URL("../../fixtures/gate-holder.mjs", import.meta.url));
const P = '{profile="default"}';

describe("gateway /metrics store gauges", () => {
  it("reports free space, file sizes, the oldest reader and the newest backup as they are", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const gw = await startGateway(home);
    const scrape = async () => (await fetch(gw.url("/metrics"))).text();

    let text = await scrape();
    const free = metric(text, `hearth_store_free_bytes${P}`)!;
    const fs = statfsSync(home);
    // The same filesystem, give or take what was written meanwhile.
    expect(Math.abs(free - fs.bavail * fs.bsize)).toBeLessThan(64 * 1024 * 1024);
    expect(metric(text, `hearth_store_database_bytes${P}`)).toBeGreaterThan(0);
    expect(metric(text, `hearth_store_wal_bytes${P}`)).toBeGreaterThanOrEqual(0);
    expect(metric(text, `hearth_store_oldest_reader_age_seconds${P}`)).toBe(0);
    expect(metric(text, `hearth_backup_newest_age_seconds${P}`)).toBe(-1);
    expect(metric(text, "hearth_process_open_fds")).toBeGreaterThan(5);
    expect(metric(text, "hearth_turns_in_flight")).toBe(0);

    const reader = spawnNode([GATE_HOLDER, join(home, "state.db")]);
    await reader.line((l) => l === "ready");
    const backup = await runCli(["backup"], { home });
    expect(backup.code).toBe(0);
    text = await scrape();
    expect(metric(text, `hearth_store_oldest_reader_age_seconds${P}`)).toBeGreaterThan(0);
    const age = metric(text, `hearth_backup_newest_age_seconds${P}`)!;
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThan(3600);
    await reader.kill("SIGKILL");
  });
});
