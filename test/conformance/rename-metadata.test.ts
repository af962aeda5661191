import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { MAX_METADATA_BYTES } from "../../src/store/metadata.js";
import { autoTitle } from "../../src/turn/auto-title.js";
import { backends, TestHomes } from "./fixture.js";

describe.each(backends)("sessions.rename with metadata on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  it("merges the keys into the metadata the session holds, in the write that sets the title", async () => {
    const s = await store.sessions.create({ metadata: { team: "ops", n: 1 } });
    const renamed = await store.sessions.rename(s.id, "Weekly", "auto", {
      metadata: { titledBy: "heuristic", n: 2 },
    });
    expect(renamed).toMatchObject({ title: "Weekly", titleSource: "auto" });
    expect(renamed.metadata).toEqual({ team: "ops", n: 2, titledBy: "heuristic" });
    expect((await store.sessions.require(s.id)).metadata).toEqual(renamed.metadata);
    // A taken automatic title still gets its suffix, with the keys merged.
    const t = await store.sessions.create();
    const suffixed = await store.sessions.rename(t.id, "Weekly", "auto", {
      metadata: { titledBy: "model" },
    });
    expect(suffixed).toMatchObject({ title: "Weekly (2)", metadata: { titledBy: "model" } });
  });

  it("with no key to merge, renames and leaves the metadata as it is (null stays null)", async () => {
    const s = await store.sessions.create();
    const renamed = await store.sessions.rename(s.id, "Plain", "user", { metadata: {} });
    expect(renamed).toMatchObject({ title: "Plain", metadata: null });
  });

  it("leaves the metadata as it is when a user's title stays", async () => {
    const s = await store.sessions.create({ title: "Mine", metadata: { keep: true } });
    const after = await store.sessions.rename(s.id, "Generated", "auto", {
      metadata: { titledBy: "model" },
    });
    expect(after).toMatchObject({ title: "Mine", titleSource: "user", metadata: { keep: true } });
    expect(await store.sessions.require(s.id)).toEqual(s);
  });

  it("refuses merged metadata over the limit with a RangeError, and changes nothing", async () => {
    const big = "x".repeat(MAX_METADATA_BYTES - 20);
    const s = await store.sessions.create({ metadata: { big } });
    await expect(
      store.sessions.rename(s.id, "Too much", "auto", { metadata: { titledBy: "heuristic" } }),
    ).rejects.toThrow(RangeError);
    await expect(
      store.sessions.rename(s.id, "Bad", "auto", { metadata: [] as unknown as { a: 1 } }),
    ).rejects.toThrow(TypeError);
    expect(await store.sessions.require(s.id)).toEqual(s);
  });

  it("an automatic title never writes back a copy of the metadata over another writer's change", async () => {
    const s = await store.sessions.create();
    await store.messages.append(s.id, { role: "user", content: "Plan a trip to Lisbon in May" });
    // Another writer replaces the metadata right after the title's write returns,
    // before autoTitle's next step: its value is acknowledged, and must stay.
    const raced = {
      sessions: {
        rename: async (...args: Parameters<Store["sessions"]["rename"]>) => {
          const out = await store.sessions.rename(...args);
          await store.sessions.setMetadata(s.id, { theirs: 1 });
          return out;
        },
        setMetadata: (...args: Parameters<Store["sessions"]["setMetadata"]>) =>
          store.sessions.setMetadata(...args),
      },
    } as unknown as Store;
    const by = await autoTitle(raced, { id: s.id, title: null, messageCount: 0 }, "Plan a trip");
    expect(by).toBe("heuristic");
    const after = await store.sessions.require(s.id);
    expect(after.title).toBe("Plan a trip");
    expect(after.metadata).toEqual({ theirs: 1 });
  });

  it("an automatic title on full metadata is written without its titledBy key", async () => {
    const big = "x".repeat(MAX_METADATA_BYTES - 20);
    const s = await store.sessions.create({ metadata: { big } });
    const by = await autoTitle(store, { id: s.id, title: null, messageCount: 0 }, "Trip notes");
    expect(by).toBe("heuristic");
    expect(await store.sessions.require(s.id)).toMatchObject({
      title: "Trip notes",
      titleSource: "auto",
      metadata: { big },
    });
  });
});
