/**
 * hearth import openclaw: an OpenClaw state dir (sessions.json and one
 * JSONL transcript per session) comes over with its branches and
 * compactions as archived history; a broken line is reported with its line
 * number and the rest imported; reruns take what was appended; hostile
 * inputs are refused.
 */
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { isHearthError } from "../../../src/errors.js";
import { importInto } from "../../../src/import/import.js";
import { openStore } from "../../../src/store/open.js";
import { tempHome } from "../../helpers/home.js";
import {
  appendTranscript,
  openClawMessage,
  openClawUser,
  writeOpenClawDir,
} from "../../helpers/openclaw-fixture.js";

function stateDir(home: string) {
  const dir = join(dirname(home), "openclaw");
  mkdirSync(dir, { recursive: true });
  return writeOpenClawDir(dir);
}

const TG = "6f1c2d3e-0001-4a5b-8c9d-aaaaaaaaaaaa";

describe("hearth import openclaw", () => {
  it("imports sessions, tool rounds, branches and compactions, and reports the broken line", async () => {
    const home = tempHome();
    const src = stateDir(home);
    const filesBefore = readdirSync(src.sessionsDir).sort();
    const report = await importInto({ kind: "openclaw", path: src.dir, home });
    expect(report.sessions).toMatchObject({ seen: src.sessions, created: src.sessions });
    expect(report.messages).toMatchObject({ seen: src.messages, inserted: src.messages });
    expect(report.verify).toMatchObject({
      ok: true,
      sessions: src.sessions,
      messages: src.messages,
    });
    expect(report.problems).toEqual([
      expect.stringContaining(`${TG}.jsonl:${src.brokenLine}: not a JSON object`),
    ]);
    expect(report.noHome).toMatchObject({
      "content block image": 1,
      "entry custom": 1,
      "entry model_change": 1,
    });
    expect(readdirSync(src.sessionsDir).sort()).toEqual(filesBefore);

    const store = await openStore({ home, role: "reader" });
    try {
      const tg = await store.sessions.require(`openclaw-${TG}`);
      expect(tg).toMatchObject({
        source: "telegram",
        chatKey: "agent:main:telegram:dm:555001",
        title: "Ana (Telegram)",
      });
      const m = await store.messages.load(tg.id);
      expect(m.map((x) => x.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(m[0]!.content).toBe("¿Qué hay en /srv? 日本語");
      expect(m[1]).toMatchObject({ content: null, tokensIn: 120, tokensOut: 30 });
      expect(m[1]!.toolCalls).toEqual([
        {
          id: "call-1",
          type: "function",
          function: { name: "bash", arguments: '{"command":"ls /srv"}' },
        },
      ]);
      expect(m[1]!.metadata).toMatchObject({
        openclaw: { reasoning: "List the directory first.", stopReason: "toolUse" },
      });
      expect(m[2]).toMatchObject({
        role: "tool",
        toolCallId: "call-1",
        name: "bash",
        content: "app\ndata",
      });

      const main = await store.messages.load("openclaw-6f1c2d3e-0002-4a5b-8c9d-bbbbbbbbbbbb", {
        includeHistory: true,
      });
      expect(main.map((x) => [x.content, x.active, x.archivedReason])).toEqual([
        ["first question", true, null],
        ["first answer", true, null],
        ["a question taken back", false, "rewind"],
        ["an answer to it", false, "rewind"],
        ["the question asked instead", true, null],
        ["the answer that counts", true, null],
      ]);
      const compacted = await store.messages.load("openclaw-6f1c2d3e-0003-4a5b-8c9d-cccccccccccc", {
        includeHistory: true,
      });
      expect(compacted.map((x) => [x.role, x.active, x.archivedReason])).toEqual([
        ["user", false, "compaction"],
        ["assistant", false, "compaction"],
        ["user", true, null],
        ["system", true, null],
        ["user", true, null],
      ]);
      expect((await store.search("ryokan")).length).toBe(1);
      expect(
        await store.sessions.get("openclaw-6f1c2d3e-0004-4a5b-8c9d-dddddddddddd"),
      ).not.toBeNull();
    } finally {
      await store.close();
    }
  });

  it("a rerun takes what OpenClaw appended; an incomplete last line waits for the next run", async () => {
    const home = tempHome();
    const src = stateDir(home);
    await importInto({ kind: "openclaw", path: src.dir, home });
    const file = join(src.sessionsDir, `${TG}.jsonl`);
    appendTranscript(file, [openClawMessage("a5", "a4", 30, openClawUser("one more thing"))]);
    appendTranscript(
      file,
      ['{"type":"message","id":"a6","parentId":"a5","message":{"role":"assist'],
      false,
    );
    const second = await importInto({ kind: "openclaw", path: src.dir, home });
    expect(second.messages).toMatchObject({ inserted: 1, skipped: src.messages });
    expect(second.problems).toContainEqual(expect.stringMatching(/:10: an incomplete last line/));
    expect(second.verify?.ok).toBe(true);
    const third = await importInto({ kind: "openclaw", path: src.dir, home });
    expect(third.messages.inserted).toBe(0);
  });

  it("refuses a symlinked state dir or transcript, and a state dir without sessions.json", async () => {
    const home = tempHome();
    const src = stateDir(home);
    const link = join(dirname(src.dir), "link");
    symlinkSync(src.dir, link);
    const refused = async (path: string) => {
      try {
        await importInto({ kind: "openclaw", path, home });
      } catch (err) {
        if (isHearthError(err)) return err.code;
        throw err;
      }
      return "imported";
    };
    expect(await refused(link)).toBe("HEARTH_PATH_SYMLINK");
    symlinkSync(
      "/etc/hostname",
      join(src.sessionsDir, "6f1c2d3e-0009-4a5b-8c9d-eeeeeeeeeeee.jsonl"),
    );
    expect(await refused(src.dir)).toBe("HEARTH_PATH_SYMLINK");
    const empty = join(dirname(src.dir), "empty");
    mkdirSync(empty);
    expect(await refused(empty)).toBe("HEARTH_IMPORT_SOURCE_INVALID");
    const broken = join(dirname(src.dir), "broken", "agents", "main", "sessions");
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, "sessions.json"), "{ not json");
    expect(await refused(join(dirname(src.dir), "broken"))).toBe("HEARTH_IMPORT_SOURCE_INVALID");
  });
});
