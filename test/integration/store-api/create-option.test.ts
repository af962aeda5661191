import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { recordAct } from "../../../src/ops/audited.js";
import { expectHearthError, TestHomes } from "./fixture.js";

// openStore({ create: false }): a writer that acts on an existing store
// (maintenance, a doctor fix, an audit row after an act) refuses a profile
// with no store instead of creating an empty one, so a mistyped profile
// name is an error and leaves the home as it was.

const homes = new TestHomes();

afterEach(async () => {
  await homes.cleanup();
});

describe("openStore({ create: false })", () => {
  it("on a profile without a store is HEARTH_STORE_NOT_FOUND and creates no file or directory", async () => {
    const home = homes.makeHome();
    const err = await expectHearthError(
      homes.open(home, { role: "writer", create: false }),
      "HEARTH_STORE_NOT_FOUND",
    );
    expect(err.hint).toMatch(/check the profile's name/);
    expect(fs.readdirSync(home)).toEqual([]);

    await expectHearthError(
      homes.open(home, { profile: "wrok", create: false }),
      "HEARTH_STORE_NOT_FOUND",
    );
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it("opens an existing store as a writer, which writes", async () => {
    const home = homes.makeHome();
    await (await homes.open(home, { profile: "work" })).close();
    const store = await homes.open(home, { profile: "work", create: false });
    expect(store.role).toBe("writer");
    const s = await store.sessions.create({ title: "kept" });
    expect((await store.sessions.require(s.id)).title).toBe("kept");
  });

  it("is refused when it is not a boolean, before anything is created", async () => {
    const home = homes.makeHome();
    await expect(openStore({ env: {}, home, create: "no" as unknown as boolean })).rejects.toThrow(
      TypeError,
    );
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it("is how an act's audit row is recorded: a store gone since the act is not created anew for it", async () => {
    const home = homes.makeHome();
    await expectHearthError(
      recordAct({ home }, { action: "export", targets: [], detail: null }),
      "HEARTH_STORE_NOT_FOUND",
    );
    expect(fs.readdirSync(home)).toEqual([]);
  });
});
