/**
 * `hearth ps` and `hearth dashboard link` on PostgreSQL list the gateways
 * and dashboards of the other hosts of the database, with their host names
 * and addresses; liveness is the server's (the presence lock), so a killed
 * host drops out of the list.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { type GatewayChild, startGateway } from "../../helpers/gateway.js";
import { otherMachine, otherMachinesAvailable } from "../../helpers/machine.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { cliEnv, pgHome } from "./helpers.js";

const running: GatewayChild[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
  await stopDashboards();
});

interface Host {
  kind: string;
  host: string;
  address: string;
  pid: number;
}

describe.skipIf(!pgEnabled)("each host's addresses on PostgreSQL", () => {
  it("ps on host A lists host B's gateway with its host name and address; dashboard link lists B's dashboard", async () => {
    const url = await freshPgDatabase();
    const homeA = pgHome(url);
    const homeB = pgHome(url);
    const machine = otherMachinesAvailable ? otherMachine("host-b") : undefined;
    const gatewayB = await startGateway(homeB, machine ? { machine } : {});
    running.push(gatewayB);
    const dashboardB = await startDashboard(homeB);

    const ps = await runCli(["--json", "ps"], { home: homeA, env: cliEnv });
    expect(ps.code).toBe(0);
    const hosts = ps.json().hosts as Host[];
    const gw = hosts.find((h) => h.kind === "gateway");
    expect(gw).toMatchObject({ address: gatewayB.address, pid: gatewayB.pid });
    if (machine) expect(gw!.host).toBe("host-b");
    expect(hosts.find((h) => h.kind === "dashboard")).toMatchObject({
      address: dashboardB.address,
      pid: dashboardB.pid,
    });
    const text = await runCli(["ps"], { home: homeA, env: cliEnv });
    expect(text.stdout).toContain(gatewayB.address);

    const link = await runCli(["--json", "dashboard", "link"], { home: homeA, env: cliEnv });
    expect(link.code).toBe(0);
    const others = link.json().otherHosts as { address: string; link: string }[];
    expect(others.map((o) => o.address)).toEqual([dashboardB.address]);
    // The one-time link works on B's dashboard (shared logins).
    const res = await fetch(others[0]!.link, { redirect: "manual" });
    expect(res.status).toBe(303);

    // Killed: the server drops its presence, and ps no longer lists it.
    await gatewayB.kill("SIGKILL");
    const after = await runCli(["--json", "ps"], { home: homeA, env: cliEnv });
    expect((after.json().hosts as Host[]).filter((h) => h.kind === "gateway")).toEqual([]);
    // The next announcement deletes the dead one's row.
    const next = await startGateway(homeB);
    running.push(next);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const rows = (await c.query("SELECT kind, pid FROM hearth_hosts ORDER BY kind")).rows;
    await c.end();
    expect(rows).toEqual([
      { kind: "dashboard", pid: dashboardB.pid },
      { kind: "gateway", pid: next.pid },
    ]);
  });
});
