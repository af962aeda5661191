/**
 * hearth import hermes: a Hermes Agent state.db at each handled schema
 * version comes over whole (sessions, lineage, archived history, flags),
 * what has no home is counted, a second run writes nothing, and the
 * verification pass holds. Imported in-process into a real SQLite store.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { importInto } from "../../../src/import/import.js";
import { openStore } from "../../../src/store/open.js";
import { HERMES_VERSIONS } from "../../helpers/hermes-fixture.js";
import { writeHermesDb } from "../../helpers/hermes-history.js";
import { tempHome } from "../../helpers/home.js";

function sourceIn(home: string, version: number) {
  const dir = join(dirname(home), "hermes");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "state.db");
  return { path, content: writeHermesDb(path, version) };
}

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("hearth import hermes", () => {
  it.each(
    HERMES_VERSIONS,
  )("imports a schema %i store whole, then nothing on a second run", async (version) => {
    const home = tempHome();
    const { path, content } = sourceIn(home, version);
    const before = digest(path);
    const filesBefore = readdirSync(dirname(path)).sort();

    const first = await importInto({ kind: "hermes", path, home });
    expect(first.schemaVersion).toBe(version);
    expect(first.sessions).toMatchObject({
      seen: content.sessions,
      created: content.sessions,
      existing: 0,
    });
    expect(first.messages).toMatchObject({
      seen: content.messages,
      inserted: content.messages,
      skipped: 0,
    });
    expect(first.verify).toMatchObject({
      ok: true,
      sessions: content.sessions,
      messages: content.messages,
    });
    expect(first.noHome["message role session_meta"]).toBe(1);
    expect(first.noHome["session.model_config"]).toBe(content.sessions);
    expect(first.noHome["session.system_prompt"]).toBe(1);
    expect(first.noHome["table.state_meta (rows)"]).toBe(1);
    if (version >= 20) expect(first.noHome["table.session_model_usage (rows)"]).toBe(1);

    // The source was read, never written: same bytes, no file added beside it.
    expect(digest(path)).toBe(before);
    expect(readdirSync(dirname(path)).sort()).toEqual(filesBefore);

    const second = await importInto({ kind: "hermes", path, home });
    expect(second.sessions).toMatchObject({ created: 0, existing: content.sessions });
    expect(second.messages).toMatchObject({ inserted: 0, skipped: content.messages, restated: 0 });
    expect(second.verify?.ok).toBe(true);

    const store = await openStore({ home, role: "reader" });
    try {
      const counts = await store.counts();
      expect(counts.messages).toBe(content.messages);
      expect(counts.archivedMessages).toBe(content.archived);
    } finally {
      await store.close();
    }
  });

  it("maps sessions, lineage, tool calls, reasoning, history and flags (schema 30)", async () => {
    const home = tempHome();
    const { path } = sourceIn(home, 30);
    await importInto({ kind: "hermes", path, home });
    const store = await openStore({ home, role: "reader" });
    try {
      const cli = await store.sessions.require("hermes-20260101_090000_a1b2c3");
      expect(cli).toMatchObject({
        source: "cli",
        title: "Fix the Docker build 🐳",
        titleSource: "user",
        createdAt: 1_767_000_000_250,
        ownerId: "basic:alice",
        messageCount: 4,
      });
      expect(cli.metadata).toMatchObject({
        hermes: { id: "20260101_090000_a1b2c3", model: "anthropic/claude-sonnet-4.6" },
      });
      const messages = await store.messages.load(cli.id);
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(messages[0]!.content).toContain("日本語もOK، والعربية");
      expect(messages[0]!.createdAt).toBe(1_767_000_001_250);
      expect(messages[1]).toMatchObject({ content: null, tokensOut: 48 });
      expect(messages[1]!.toolCalls).toEqual([
        {
          id: "call_1",
          type: "function",
          function: { name: "terminal", arguments: '{"cmd":"docker build ."}' },
        },
      ]);
      expect(messages[1]!.metadata).toMatchObject({
        hermes: { reasoning: "Let me look at the build output first.", finishReason: "tool_calls" },
      });
      expect(messages[2]).toMatchObject({ role: "tool", toolCallId: "call_1", name: "terminal" });
      expect(messages[3]!.clientId).toMatch(/^hermes:\d+$/);

      const parent = await store.sessions.require("hermes-20260102_100000_tg0001");
      const child = await store.sessions.require("hermes-20260102_113000_tg0002");
      expect(parent).toMatchObject({
        source: "telegram",
        chatKey: "555001",
        endReason: "compression",
      });
      expect(parent.endedAt).toBe(parent.createdAt + 5_400_000);
      expect(child.parentId).toBe(parent.id);

      const empty = await store.sessions.require("hermes-20260103_080000_empty0");
      expect(empty.messageCount).toBe(0);

      const rewound = await store.messages.load("hermes-20260104_120000_rewind", {
        includeHistory: true,
      });
      expect(rewound.map((m) => [m.content, m.active, m.archivedReason])).toEqual([
        ["first question", false, "compaction"],
        ["first answer", false, "compaction"],
        ["Summary: a first question was answered.", true, null],
        ["a question taken back", false, "rewind"],
        ["the question asked instead", true, null],
      ]);
      expect((await store.sessions.require("hermes-20260105_070000_pinned")).pinned).toBe(true);
      expect((await store.sessions.require("hermes-20260105_080000_archiv")).archived).toBe(true);
      expect((await store.sessions.require("hermes-20260105_090000_hidden")).hidden).toBe(true);

      // Searchable on day one.
      const hits = await store.search("ryokan");
      expect(hits.map((h) => h.sessionId)).toEqual([child.id]);
    } finally {
      await store.close();
    }
  });

  it("--dry-run says what would come over and writes nothing", async () => {
    const home = tempHome();
    const { path, content } = sourceIn(home, 30);
    // The store exists (a reader needs one) and is empty.
    await (await openStore({ home })).close();
    const dry = await importInto({ kind: "hermes", path, home, dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.messages).toMatchObject({
      seen: content.messages,
      inserted: content.messages,
      skipped: 0,
    });
    expect(dry.verify).toBeNull();
    expect(dry.noHome["message role session_meta"]).toBe(1);
    const store = await openStore({ home, role: "reader" });
    try {
      expect((await store.counts()).sessions).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("a title hearth already shows is stored renamed, and counted", async () => {
    const home = tempHome();
    const { path } = sourceIn(home, 30);
    const store = await openStore({ home });
    await store.sessions.create({ title: "Trip plans" });
    await store.close();
    const report = await importInto({ kind: "hermes", path, home });
    expect(report.sessions.titlesRenamed).toBe(1);
    const after = await openStore({ home, role: "reader" });
    try {
      expect((await after.sessions.require("hermes-20260102_100000_tg0001")).title).toBe(
        "Trip plans (2)",
      );
    } finally {
      await after.close();
    }
  });
});
