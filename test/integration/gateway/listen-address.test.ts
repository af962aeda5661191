/**
 * A listen address with a stray space ("127.0.0.1 ", from config.json or
 * HEARTH_GATEWAY_HOST) is a configuration error, coded and exit 78, never
 * "internal error: getaddrinfo ENOTFOUND … a bug in hearth".
 */
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { CLI } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";

afterEach(cleanupHomes);

function run(home: string, command: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [CLI, "--home", home, "--json", command, "run"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
}

describe("a listen address with a space", () => {
  it("is refused as configuration (HEARTH_CONFIG_INVALID, exit 78) by the gateway and the dashboard", () => {
    const fromEnv = run(tempHome(), "gateway", { HEARTH_GATEWAY_HOST: "127.0.0.1 " });
    const home = tempHome();
    writeConfig(home, { gateway: { host: "127.0.0.1 " }, dashboard: { host: "127.0.0.1 " } });
    for (const r of [fromEnv, run(home, "gateway"), run(home, "dashboard")]) {
      expect(r.status, r.stderr).toBe(78);
      expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_CONFIG_INVALID");
      expect(r.stderr).not.toContain("a bug in hearth");
      expect(r.stdout).toBe("");
    }
  });
});
