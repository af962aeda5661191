import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { spawnDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { spawnGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { SchedulerChild } from "../../helpers/scheduler.js";

// A port taken by another process is a refusal a restart cannot fix: each
// server exits 78 with HEARTH_PORT_IN_USE naming the port and the process
// that holds it (issue 41.2), not "internal error" in a restart loop.

let holder: Server | undefined;
afterEach(async () => {
  await stopDashboards();
  await new Promise((r) => (holder ? holder.close(r) : r(undefined)));
  holder = undefined;
});

async function takePort(): Promise<number> {
  holder = createServer();
  await new Promise<void>((r) => holder!.listen(0, "127.0.0.1", r));
  return (holder.address() as { port: number }).port;
}

describe("a server whose port is taken (HEARTH_PORT_IN_USE)", () => {
  it("gateway, dashboard and scheduler exit 78 naming the port and this test's pid", async () => {
    const port = await takePort();
    const home = tempHome();
    writeConfig(home, {});
    // The store exists first: three processes creating one new store at once is another test's matter.
    await (await openStore({ home })).close();
    // The suite runs every server on port 0 through these variables; this test names the taken one.
    const env = {
      ...process.env,
      HEARTH_GATEWAY_PORT: String(port),
      HEARTH_DASHBOARD_PORT: String(port),
      HEARTH_SCHEDULER_PORT: String(port),
    };
    const gateway = spawnGateway(home, { env });
    const dashboard = spawnDashboard(home, { env });
    const scheduler = new SchedulerChild(home, [], env);
    for (const child of [gateway, dashboard, scheduler.process]) {
      const exit = await child.exited;
      expect(exit.code, child.stderr).toBe(78);
      expect(child.stderr).toContain(
        `cannot listen on 127.0.0.1:${port}: the port is in use by pid ${process.pid}`,
      );
    }
  });
});
