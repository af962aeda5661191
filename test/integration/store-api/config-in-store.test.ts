import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type HearthConfigInput,
  SYNCHRONOUS_LEVELS,
  type SynchronousLevel,
} from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { expectHearthError, TestHomes } from "./fixture.js";

/** C2: configuration reaches the connections, or hearth says loudly that it did not. */

const homes = new TestHomes();

afterEach(async () => {
  await homes.cleanup();
});

const SYNC_NUMBER: Record<SynchronousLevel, number> = { off: 0, normal: 1, full: 2, extra: 3 };

describe("configuration given to openStore", () => {
  it('synchronous "normal" is what durability() reports and what both connections use', async () => {
    const store = await homes.open(homes.makeHome(), {
      config: { durability: { synchronous: "normal" } },
    });
    const report = await store.durability();
    expect(report.synchronous).toEqual({ configured: "normal", actual: "normal" });
    expect(store.config.durability.synchronous).toBe("normal");
    for (const role of ["writer", "reader"] as const) {
      const db = store[internals].connection(role).db;
      expect(db.pragma("synchronous", { simple: true })).toBe(SYNC_NUMBER.normal);
    }
    expect(store.warnings).toEqual([]);
  });

  it.each(SYNCHRONOUS_LEVELS)("synchronous %s is applied", async (level) => {
    const store = await homes.open(homes.makeHome(), {
      config: { durability: { synchronous: level } },
    });
    expect((await store.durability()).synchronous).toEqual({ configured: level, actual: level });
  });

  it("defaults to WAL and synchronous full", async () => {
    const store = await homes.open(homes.makeHome());
    const report = await store.durability();
    expect(report.journalMode).toEqual({ configured: "wal", actual: "wal" });
    expect(report.synchronous).toEqual({ configured: "full", actual: "full" });
  });

  it('journalMode "delete" on a new home gives a rollback-journal database', async () => {
    const home = homes.makeHome();
    const store = await homes.open(home, { config: { durability: { journalMode: "delete" } } });
    const session = await store.sessions.create();
    await store.messages.append(session.id, { role: "user", content: "hi" });
    expect((await store.durability()).journalMode).toEqual({
      configured: "delete",
      actual: "delete",
    });
    // No -wal or -shm: a rollback journal. (run/ holds this process's marker.)
    expect(fs.readdirSync(home).sort()).toEqual(["run", "state.db"]);
    await store.close();
    // The mode is a property of the file: a reader sees it too.
    const reader = await homes.open(home, { role: "reader" });
    expect((await reader.durability()).journalMode.actual).toBe("delete");
  });

  it("an unknown key is HEARTH_CONFIG_INVALID and creates no database file", async () => {
    const home = homes.makeHome();
    const bad = { durability: { synchronus: "normal" } } as unknown as HearthConfigInput;
    const err = await expectHearthError(homes.open(home, { config: bad }), "HEARTH_CONFIG_INVALID");
    expect(err.message).toContain("synchronus");
    expect(fs.readdirSync(home)).toEqual([]);

    const nested = path.join(home, "new-home");
    await expectHearthError(
      homes.open(nested, { config: { store: { busyTimeoutMs: 5, retries: 3 } } as never }),
      "HEARTH_CONFIG_INVALID",
    );
    expect(fs.existsSync(nested)).toBe(false);
  });

  it("a bad value is HEARTH_CONFIG_INVALID, never a silent default", async () => {
    const home = homes.makeHome();
    const bad = { durability: { synchronous: "fast" } } as unknown as HearthConfigInput;
    const err = await expectHearthError(homes.open(home, { config: bad }), "HEARTH_CONFIG_INVALID");
    expect(err.message).toContain("durability.synchronous");
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it("options override HEARTH_* variables, which override config.json", async () => {
    const home = homes.makeHome();
    fs.writeFileSync(
      path.join(home, "config.json"),
      JSON.stringify({ durability: { synchronous: "extra" } }),
    );
    const fromFile = await homes.open(home);
    expect((await fromFile.durability()).synchronous.actual).toBe("extra");
    await fromFile.close();

    const fromEnv = await homes.open(home, { env: { HEARTH_SYNCHRONOUS: "off" } });
    expect((await fromEnv.durability()).synchronous.actual).toBe("off");
    await fromEnv.close();

    const fromOptions = await homes.open(home, {
      env: { HEARTH_SYNCHRONOUS: "off" },
      config: { durability: { synchronous: "normal" } },
    });
    expect((await fromOptions.durability()).synchronous.actual).toBe("normal");
  });

  it("an unknown key in config.json is HEARTH_CONFIG_INVALID and creates no database", async () => {
    const home = homes.makeHome();
    fs.writeFileSync(path.join(home, "config.json"), JSON.stringify({ durabilty: {} }));
    await expectHearthError(homes.open(home), "HEARTH_CONFIG_INVALID");
    expect(fs.readdirSync(home)).toEqual(["config.json"]);
  });
});

describe("configuration of a second store on a database this process already holds", () => {
  // durability() reads `synchronous` from the writer connection when the store
  // has one (readDurability in src/store/sqlite/durability.ts): the level commits
  // use, not the level of the read-only connection opened before it.
  it("durability() reports the synchronous level the writer connection really uses", async () => {
    const home = homes.makeHome();
    await (await homes.open(home)).close();
    // A reader (synchronous full) first, then a writer configured for "normal".
    await homes.open(home, { role: "reader" });
    const writer = await homes.open(home, { config: { durability: { synchronous: "normal" } } });
    const writerLevel = writer[internals].connection("writer").db.pragma("synchronous", {
      simple: true,
    });
    expect(writerLevel).toBe(SYNC_NUMBER.normal);
    expect((await writer.durability()).synchronous.actual).toBe("normal");
  });

  // A second store on a database this process already holds shares its writer
  // connection (C1), so its own synchronous level cannot take effect there:
  // src/store/sqlite/open.ts (connectionMismatches) puts a line naming the level in warnings.
  it("a different synchronous level is applied or reported in warnings, never dropped silently", async () => {
    const home = homes.makeHome();
    await homes.open(home); // synchronous full
    const second = await homes.open(home, { config: { durability: { synchronous: "off" } } });
    const writerLevel = second[internals].connection("writer").db.pragma("synchronous", {
      simple: true,
    });
    const applied = writerLevel === SYNC_NUMBER.off;
    const told = second.warnings.some((w) => /synchronous/i.test(w));
    expect(applied || told).toBe(true);
  });

  it("a different journal mode is reported in warnings, never dropped silently", async () => {
    const home = homes.makeHome();
    await homes.open(home); // WAL
    const second = await homes.open(home, { config: { durability: { journalMode: "delete" } } });
    const report = await second.durability();
    expect(report.journalMode).toEqual({ configured: "delete", actual: "wal" });
    expect(second.warnings.some((w) => /journal mode/i.test(w))).toBe(true);
  });
});
