import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import { salvage } from "../../../src/store/sqlite/salvage.js";
import { tempHome } from "../../helpers/home.js";

describe("repair's salvage and graph checkpoints", () => {
  it("carries checkpoints, channel values and pending writes into the salvaged store", async () => {
    const home = tempHome();
    const saver = await HearthSaver.open({ home });
    const base = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    const one = await saver.put(
      base,
      {
        v: 4,
        id: "1",
        ts: "2026-01-01T00:00:00.000Z",
        channel_values: { a: "x", b: [1, 2] },
        channel_versions: { a: 1, b: 1 },
        versions_seen: {},
      },
      { source: "input", step: -1, parents: {} },
      { a: 1, b: 1 },
    );
    const two = await saver.put(
      one,
      {
        v: 4,
        id: "2",
        ts: "2026-01-01T00:00:01.000Z",
        channel_values: { a: "y", b: [1, 2] },
        channel_versions: { a: 2, b: 1 },
        versions_seen: {},
      },
      { source: "loop", step: 0, parents: {} },
      { a: 2 },
    );
    await saver.putWrites(two, [["a", "z"]], "task");
    const before = await saver.getTuple(two);
    const path = saver.store.path;
    await saver.close();

    const target = join(mkdtempSync(join(tmpdir(), "hearth-salvage-")), "salvaged.db");
    const source = new Database(path, { readonly: true });
    try {
      salvage(source, target);
    } finally {
      source.close();
    }
    const check = new Database(target, { readonly: true });
    const count = (t: string) =>
      (check.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    expect([count("graph_checkpoints"), count("graph_blobs"), count("graph_writes")]).toEqual([
      2, 3, 1,
    ]);
    check.close();

    // The salvaged file, opened as a store, answers as the original did.
    const salvagedHome = tempHome();
    const { mkdirSync, copyFileSync } = await import("node:fs");
    mkdirSync(salvagedHome, { recursive: true, mode: 0o700 });
    copyFileSync(target, join(salvagedHome, "state.db"));
    const again = await HearthSaver.open({ home: salvagedHome });
    expect(await again.getTuple(two)).toEqual(before);
    await again.close();
  });
});
