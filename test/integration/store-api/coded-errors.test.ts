import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { isHearthError, openStore, type Store } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe("every error a store API raises is a coded HearthError, reads included", () => {
  it("codes SQLite's errors from reads, searches and exports when the schema was damaged by another process", async () => {
    const home = tempHome();
    const store = await openStore({ home, role: "writer" });
    open.push(store);
    const s = await store.sessions.create({ title: "x" });
    await store.messages.append(s.id, { role: "user", content: "hello" });
    const reader = await openStore({ home, role: "reader" });
    open.push(reader);
    // Someone else's tool drops tables under the running processes.
    const raw = new Database(store.path);
    raw.exec("DROP TABLE meta; DROP TABLE messages_fts;");
    raw.close();

    for (const attempt of [
      () => reader.meta.get("k"),
      () => store.meta.set("k", "v"),
      () => reader.search("hello"),
      async () => {
        for await (const _ of reader.export({ format: "jsonl" })) void _;
        const raw2 = new Database(store.path);
        raw2.exec("DROP TABLE messages");
        raw2.close();
        for await (const _ of reader.export({ format: "jsonl" })) void _;
      },
    ]) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isHearthError(err), String(err)).toBe(true);
      expect((err as { code: string }).code).toBe("HEARTH_SQLITE");
      expect((err as { sqliteCode: string }).sqliteCode).toMatch(/^SQLITE_/);
    }
    // API misuse still reads as such.
    await expect(reader.sessions.list({ limit: -1 })).rejects.toBeInstanceOf(RangeError);
  });
});
