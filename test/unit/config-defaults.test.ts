import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EMPTY_CONFIG_RESULT } from "../../src/config/defaults.js";
import { loadConfig } from "../../src/config/load.js";
import { loadConfigLazily } from "../../src/config/load-lazily.js";
import { configSchema, DEFAULT_CONFIG } from "../../src/config/schema.js";
import { HearthError } from "../../src/errors.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-config-defaults-"));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe("the written-out defaults (config/defaults.ts)", () => {
  it("are exactly what the schema gives for an empty configuration", () => {
    expect(EMPTY_CONFIG_RESULT).toStrictEqual(configSchema().parse({}));
    expect(EMPTY_CONFIG_RESULT).toStrictEqual(DEFAULT_CONFIG);
  });

  it("are what loadConfigLazily gives with nothing to validate, a fresh copy each time", async () => {
    const a = await loadConfigLazily({ home, env: {} });
    expect(a).toStrictEqual(loadConfig({ home, env: {} }));
    a.store.busyTimeoutMs = 1;
    a.gateway.allowedHosts.push("x");
    expect((await loadConfigLazily({ home, env: {} })).store.busyTimeoutMs).toBe(5000);
    expect(EMPTY_CONFIG_RESULT.gateway.allowedHosts).toEqual([]);
  });

  it("loadConfigLazily validates every non-empty layer like loadConfig, with the same errors", async () => {
    const file = join(home, "config.json");
    writeFileSync(file, JSON.stringify({ store: { busyTimout: 5 } }), { mode: 0o600 });
    const lazily = await loadConfigLazily({ home, env: {} }).catch((e: unknown) => e);
    expect(lazily).toBeInstanceOf(HearthError);
    let eager: unknown;
    try {
      loadConfig({ home, env: {} });
    } catch (err) {
      eager = err;
    }
    expect((lazily as HearthError).message).toBe((eager as HearthError).message);
    expect((lazily as HearthError).message).toContain('did you mean "busyTimeoutMs"');
    rmSync(file);
    const env = { HEARTH_SYNCHRONOUS: "sometimes" };
    await expect(loadConfigLazily({ home, env })).rejects.toMatchObject({
      code: "HEARTH_CONFIG_INVALID",
    });
    expect(
      (await loadConfigLazily({ home, env: { HEARTH_SYNCHRONOUS: "normal" } })).durability,
    ).toMatchObject({ synchronous: "normal" });
    await expect(
      loadConfigLazily({ home, env: {}, overrides: { store: { busyTimeoutMs: -1 } } }),
    ).rejects.toMatchObject({ code: "HEARTH_CONFIG_INVALID" });
  });
});
