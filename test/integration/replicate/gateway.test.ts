import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import { runCli } from "../../helpers/cli.js";
import { type GatewayChild, metric, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { replicaConfig, rows } from "../../helpers/replica.js";

const gateways: GatewayChild[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.kill("SIGKILL");
});

const lag = async (gw: GatewayChild) =>
  metric(
    await (await fetch(gw.url("/metrics"))).text(),
    'hearth_replication_lag_seconds{profile="default",target="offsite"}',
  );

describe("the gateway replicates the profiles it serves", () => {
  it("reports lag in /metrics, ships what it acknowledges, and pauses for a maintenance window", async () => {
    const home = tempHome();
    const config = replicaConfig(mkdtempSync(join(tmpdir(), "hearth-target-")), {
      intervalMs: 100,
    });
    writeConfig(home, config);
    const gw = await startGateway(home);
    gateways.push(gw);
    for (let i = 0; i < 5; i++)
      expect((await gw.post({ platform: "p", chat: "c", content: `before ${i}` })).status).toBe(
        200,
      );
    await until("a lag in /metrics", async () => (await lag(gw)) !== undefined, 20_000);
    expect(await lag(gw)).toBeLessThan(60);

    // A window parks the gateway; the replicator lets the WAL go first, so the structural op runs.
    const optimize = await runCli(["--json", "sessions", "optimize", "--window"], { home });
    expect(optimize.code, optimize.stderr).toBe(0);
    for (let i = 0; i < 5; i++)
      expect((await gw.post({ platform: "p", chat: "c", content: `after ${i}` })).status).toBe(200);
    const acknowledged = rows(join(home, "state.db"));
    const settings = configSchema().parse(config);
    const target = await openTarget(targetConfig(settings, "offsite"), home);
    await until(
      "the acknowledged rows on the target",
      async () => {
        const into = join(mkdtempSync(join(tmpdir(), "hearth-gw-")), "home");
        const restored = await restoreIntoNewHome(target, "default", undefined, into, settings);
        return restored.counts.messages >= acknowledged.length;
      },
      20_000,
    );
    const into = join(mkdtempSync(join(tmpdir(), "hearth-gw-")), "home");
    const restored = await restoreIntoNewHome(target, "default", undefined, into, settings);
    expect(rows(restored.path).slice(0, acknowledged.length)).toEqual(acknowledged);
  });
});
