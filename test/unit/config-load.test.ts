import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { HearthError } from "../../src/errors.js";

let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-config-"));
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

function writeConfig(value: unknown): string {
  const file = join(home, "config.json");
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
  return file;
}

function failure(load: () => unknown): HearthError {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(HearthError);
    return err as HearthError;
  }
  throw new Error("expected loadConfig to throw");
}

describe("loadConfig", () => {
  it("gives the defaults when there is no file, env or override", () => {
    expect(loadConfig({ home, env: {} })).toEqual(DEFAULT_CONFIG);
  });

  it("ignores HEARTH_* variables it does not know and empty values", () => {
    const env = { HEARTH_SYNCHRONOUS: "", HEARTH_OTHER: "x", PATH: "/bin" };
    expect(loadConfig({ home, env })).toEqual(DEFAULT_CONFIG);
  });

  it("applies defaults < file < env < overrides", () => {
    writeConfig({
      durability: { synchronous: "extra", journalMode: "truncate" },
      store: { busyTimeoutMs: 1000 },
    });
    const fileOnly = loadConfig({ home, env: {} });
    expect(fileOnly.durability.synchronous).toBe("extra");
    expect(fileOnly.durability.journalMode).toBe("truncate");
    expect(fileOnly.durability.walAutocheckpointPages).toBe(1000);
    expect(fileOnly.store.busyTimeoutMs).toBe(1000);

    const env = { HEARTH_SYNCHRONOUS: "normal", HEARTH_BUSY_TIMEOUT_MS: "2500" };
    const withEnv = loadConfig({ home, env });
    expect(withEnv.durability.synchronous).toBe("normal");
    expect(withEnv.durability.journalMode).toBe("truncate");
    expect(withEnv.store.busyTimeoutMs).toBe(2500);

    const withOverrides = loadConfig({
      home,
      env,
      overrides: { durability: { synchronous: "off" } },
    });
    expect(withOverrides.durability.synchronous).toBe("off");
    expect(withOverrides.durability.journalMode).toBe("truncate");
    expect(withOverrides.store.busyTimeoutMs).toBe(2500);
  });

  it("lets an override's section merge with the file's rather than replace it", () => {
    writeConfig({ durability: { journalMode: "delete" } });
    const config = loadConfig({
      home,
      env: {},
      overrides: { durability: { synchronous: "full" } },
    });
    expect(config.durability.journalMode).toBe("delete");
  });

  it("reads process.env when no env is given", () => {
    const saved = process.env.HEARTH_SYNCHRONOUS;
    process.env.HEARTH_SYNCHRONOUS = "extra";
    try {
      expect(loadConfig({ home }).durability.synchronous).toBe("extra");
    } finally {
      if (saved === undefined) delete process.env.HEARTH_SYNCHRONOUS;
      else process.env.HEARTH_SYNCHRONOUS = saved;
    }
  });

  it("rejects malformed JSON as HEARTH_CONFIG_UNREADABLE naming the file", () => {
    const file = writeConfig('{ "durability": ');
    const err = failure(() => loadConfig({ home, env: {} }));
    expect(err.code).toBe("HEARTH_CONFIG_UNREADABLE");
    expect(err.resource).toBe(file);
    expect(err.message).toContain(`cannot parse ${file}`);
    expect(err.hint).toContain(file);
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });

  it("rejects a file whose top level is not an object", () => {
    writeConfig("[1, 2]");
    const err = failure(() => loadConfig({ home, env: {} }));
    expect(err.code).toBe("HEARTH_CONFIG_UNREADABLE");
    expect(err.message).toContain("the top level must be a JSON object");
  });

  it("reports a config path it cannot read as HEARTH_CONFIG_UNREADABLE", () => {
    mkdirSync(join(home, "config.json"));
    const err = failure(() => loadConfig({ home, env: {} }));
    expect(err.code).toBe("HEARTH_CONFIG_UNREADABLE");
    expect(err.message).toContain("cannot read");
  });

  it("names the file for a bad key in the file", () => {
    const file = writeConfig({ durability: { synchronus: "full" } });
    const err = failure(() => loadConfig({ home, env: {} }));
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.resource).toBe(file);
    expect(err.message).toContain('did you mean "synchronous"');
  });

  it("names the environment for a bad env value", () => {
    const err = failure(() => loadConfig({ home, env: { HEARTH_SYNCHRONOUS: "fast" } }));
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.resource).toBe("environment (HEARTH_*)");
    expect(err.message).toContain("environment (HEARTH_*)");
    expect(err.message).toContain('"off", "normal", "full", "extra"');
  });

  it("rejects a non-numeric HEARTH_BUSY_TIMEOUT_MS naming the environment", () => {
    const err = failure(() => loadConfig({ home, env: { HEARTH_BUSY_TIMEOUT_MS: "5s" } }));
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.resource).toBe("environment (HEARTH_*)");
    expect(err.message).toContain("store.busyTimeoutMs");
  });

  it("names the options for a bad override", () => {
    const overrides = { store: { busyTimeout: 10 } } as never;
    const err = failure(() => loadConfig({ home, env: {}, overrides }));
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.resource).toBe("options");
    expect(err.message).toContain('did you mean "busyTimeoutMs"');
  });
});
