import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { backends, TestHomes } from "./fixture.js";

describe.each(backends)("meta on $name", (backend) => {
  const homes = new TestHomes(backend);
  let home: string;
  let store: Store;

  beforeEach(async () => {
    home = homes.makeHome();
    store = await homes.open(home);
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("store.meta", () => {
    it("get of an unknown key is null", async () => {
      expect(await store.meta.get("missing")).toBeNull();
    });

    it("set, get, overwrite, delete", async () => {
      await store.meta.set("scheduler.last", "2024-01-01T00:00:00Z");
      expect(await store.meta.get("scheduler.last")).toBe("2024-01-01T00:00:00Z");
      await store.meta.set("scheduler.last", "2024-02-01T00:00:00Z");
      expect(await store.meta.get("scheduler.last")).toBe("2024-02-01T00:00:00Z");
      expect(await store.meta.delete("scheduler.last")).toBe(true);
      expect(await store.meta.get("scheduler.last")).toBeNull();
      expect(await store.meta.delete("scheduler.last")).toBe(false);
    });

    it("stores the empty string and arbitrary text exactly", async () => {
      await store.meta.set("empty", "");
      await store.meta.set("json", JSON.stringify({ a: [1, 2], b: "ü" }));
      expect(await store.meta.get("empty")).toBe("");
      expect(JSON.parse((await store.meta.get("json")) ?? "null")).toEqual({ a: [1, 2], b: "ü" });
    });

    it("entries lists every key in key order", async () => {
      expect(await store.meta.entries()).toEqual({});
      await store.meta.set("b", "2");
      await store.meta.set("a", "1");
      await store.meta.set("c", "3");
      await store.meta.delete("c");
      const entries = await store.meta.entries();
      expect(entries).toEqual({ a: "1", b: "2" });
      expect(Object.keys(entries)).toEqual(["a", "b"]);
    });

    it.each([
      42,
      null,
      undefined,
      { v: 1 },
      ["x"],
      true,
    ])("rejects the non-string value %j with a TypeError and stores nothing", async (value) => {
      await store.meta.set("k", "before");
      await expect(store.meta.set("k", value as unknown as string)).rejects.toThrow(TypeError);
      expect(await store.meta.get("k")).toBe("before");
      await expect(store.meta.set("other", value as unknown as string)).rejects.toThrow(TypeError);
      expect(await store.meta.entries()).toEqual({ k: "before" });
    });

    it("persists across close and reopen", async () => {
      await store.meta.set("version", "7");
      await store.close();
      const again = await homes.open(home);
      expect(await again.meta.get("version")).toBe("7");
    });
  });
});
