import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { expectHearthError, TestHomes } from "./fixture.js";

/**
 * store.copyTo(target): a target that cannot be created is the target's
 * fault, reported as such (HEARTH_OUTPUT_UNWRITABLE naming the target),
 * never as a SQLite error on the source store.
 */

const homes = new TestHomes();

afterEach(async () => {
  await homes.cleanup();
});

async function storeWithAMessage() {
  const home = homes.makeHome();
  const store = await homes.open(home);
  const session = await store.sessions.create();
  await store.messages.append(session.id, { role: "user", content: "kept" });
  return { home, store };
}

describe("store.copyTo", () => {
  it("into a missing directory is HEARTH_OUTPUT_UNWRITABLE naming the target, and creates nothing", async () => {
    const { home, store } = await storeWithAMessage();
    const target = path.join(home, "no-such-dir", "copy.db");
    const err = await expectHearthError(store.copyTo(target), "HEARTH_OUTPUT_UNWRITABLE");
    expect(err.resource).toBe(target);
    expect(err.message).toContain(target);
    expect(err.message).toMatch(/directory does not exist/);
    expect(err.message).not.toContain(store.path);
    expect(err.hint).toContain(path.dirname(target));
    expect(fs.existsSync(path.dirname(target))).toBe(false);
    // The source is untouched and still serves.
    expect((await store.quickCheck()).ok).toBe(true);
    expect((await store.counts()).messages).toBe(1);
  });

  it("onto an existing file is HEARTH_OUTPUT_UNWRITABLE and leaves that file as it was", async () => {
    const { home, store } = await storeWithAMessage();
    const target = path.join(home, "existing.db");
    fs.writeFileSync(target, "not mine");
    const err = await expectHearthError(store.copyTo(target), "HEARTH_OUTPUT_UNWRITABLE");
    expect(err.resource).toBe(target);
    expect(err.message).toMatch(/already exists/);
    expect(fs.readFileSync(target, "utf8")).toBe("not mine");
  });

  it("into an existing directory writes a verified copy", async () => {
    const { home, store } = await storeWithAMessage();
    const target = path.join(home, "copy.db");
    await store.copyTo(target);
    const copy = new Database(target, { readonly: true, fileMustExist: true });
    try {
      expect(copy.prepare("SELECT content FROM messages").pluck().all()).toEqual(["kept"]);
    } finally {
      copy.close();
    }
  });
});
