import { fileURLToPath } from "node:url";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode } from "../../helpers/process.js";

const WRITER = fileURLToPath(new URL("../../fixtures/graph-writer.mjs", import.meta.url));

describe("two processes writing checkpoints to one thread", () => {
  it("lose nothing, and each fork reads back its own values at versions both used", async () => {
    const home = tempHome();
    const threadId = "shared-thread";
    const rootId = uuid6(-1);
    const saver = await HearthSaver.open({ home });
    await saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      {
        v: 4,
        id: rootId,
        ts: new Date().toISOString(),
        channel_values: { count: "root", owner: "root", shared: "root-shared" },
        channel_versions: { count: 1, owner: 1, shared: 1 },
        versions_seen: {},
      },
      { source: "input", step: -1, parents: {} },
      { count: 1, owner: 1, shared: 1 },
    );

    const count = 150;
    const writers: Child[] = ["a", "b"].map((name) =>
      spawnNode([WRITER, JSON.stringify({ home, threadId, rootId, name, count })]),
    );
    await Promise.all(writers.map((w) => w.json((v) => v.ready === true, "ready")));
    for (const w of writers) w.send("go");
    const exits = await Promise.all(writers.map((w) => w.exited));
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);

    for (const [w, name] of [
      [writers[0]!, "a"],
      [writers[1]!, "b"],
    ] as const) {
      const acks = w.lines
        .map((l) => JSON.parse(l) as { ack?: string; i?: number })
        .filter((m) => m.ack !== undefined);
      expect(acks).toHaveLength(count);
      let parent = rootId;
      for (const { ack, i } of acks) {
        const tuple = await saver.getTuple({
          configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: ack },
        });
        expect(tuple?.checkpoint.channel_values).toEqual({
          count: `${name}-${i}`,
          owner: name,
          shared: "root-shared",
        });
        expect(tuple?.pendingWrites).toEqual([[`${name}-task`, "count", `${name}-w${i}`]]);
        expect(tuple?.parentConfig?.configurable?.checkpoint_id).toBe(parent);
        expect(tuple?.metadata).toMatchObject({ writer: name, step: i });
        parent = ack!;
      }
    }
    const listed = [];
    for await (const t of saver.list({ configurable: { thread_id: threadId } })) listed.push(t);
    expect(listed).toHaveLength(2 * count + 1);
    const byWriter = [];
    for await (const t of saver.list(
      { configurable: { thread_id: threadId } },
      { filter: { writer: "b" } },
    ))
      byWriter.push(t);
    expect(byWriter).toHaveLength(count);
    const path = saver.store.path;
    await saver.close();

    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});
