// A gateway's configuration reload (SIGHUP) is in every served profile's
// audit trail (docs/security.md#audit-trail), a refused one as "failed".
import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../../../src/store/audit.js";
import { startGateway, withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const trail = (home: string): Promise<AuditEntry[]> => withStore(home, (s) => s.audit.list());

describe("gateway config reload audit", () => {
  it("records a reload, and a refused reload as failed, via gateway", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, host: "0.0.0.0", requireAuth: true } });
    const gw = await startGateway(home);
    gw.child.kill("SIGHUP");
    await until("the reload recorded", async () => (await trail(home)).length === 1);
    // Auth off beyond loopback: the gateway refuses the reload (the file itself is valid).
    writeConfig(home, { gateway: { port: 0, host: "0.0.0.0", requireAuth: false } });
    gw.child.kill("SIGHUP");
    await until("the refusal recorded", async () => (await trail(home)).length === 2);
    const [failed, ok] = await trail(home);
    expect(ok).toMatchObject({
      action: "config.reload",
      outcome: "ok",
      actor: { kind: "local", via: "gateway", address: null },
    });
    expect(failed).toMatchObject({
      action: "config.reload",
      outcome: "failed",
      detail: { error: expect.stringMatching(/^HEARTH_/) },
    });
  });
});
