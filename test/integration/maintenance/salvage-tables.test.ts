import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { salvage } from "../../../src/store/sqlite/salvage.js";
import { tempHome } from "../../helpers/home.js";

const count = (db: Database.Database, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;

const tablesOf = (db: Database.Database) =>
  (
    db
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts%'",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);

describe("repair's salvage keeps every table (issue 41)", () => {
  it("copies every row of every table but the search index; orphans go as ON DELETE says", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const parent = await store.sessions.create({ title: "parent" });
    const child = await store.sessions.create({ title: "child", parentId: parent.id });
    await store.messages.appendBatch(parent.id, [{ role: "user", content: "of the parent" }]);
    await store.messages.appendBatch(child.id, [{ role: "user", content: "of the child" }]);
    for (let i = 0; i < 5; i++)
      await store.runs.record({
        job: "j",
        profile: "default",
        trigger: "schedule",
        scheduledAt: 1_000 * i,
        outcome: "missed",
        note: `run ${i}`,
      });
    const path = store.path;
    await store.close();

    // The parent session's row is lost (as a broken page loses it): its
    // message must go (CASCADE), the child must stay, unlinked (SET NULL).
    const source = new Database(path);
    source.pragma("foreign_keys = OFF");
    source.prepare("DELETE FROM sessions WHERE id = ?").run(parent.id);
    const before = Object.fromEntries(tablesOf(source).map((t) => [t, count(source, t)]));
    const target = join(mkdtempSync(join(tmpdir(), "hearth-salvage-")), "salvaged.db");
    let counts: ReturnType<typeof salvage>;
    try {
      counts = salvage(source, target);
    } finally {
      source.close();
    }
    const fresh = new Database(target, { readonly: true });
    try {
      const after = Object.fromEntries(tablesOf(fresh).map((t) => [t, count(fresh, t)]));
      expect(after.job_runs).toBe(5);
      expect(after).toEqual({ ...before, messages: before.messages! - 1 });
      expect(counts.tables).toEqual(after);
      expect(counts.messages).toBe(1);
      const kept = fresh.prepare("SELECT parent_id FROM sessions WHERE id = ?").get(child.id) as {
        parent_id: string | null;
      };
      expect(kept).toEqual({ parent_id: null });
      expect(fresh.pragma("foreign_key_check")).toEqual([]);
    } finally {
      fresh.close();
    }
  });
});
