import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode } from "../../helpers/process.js";

// The OpenAI Agents SDK's real run(), with a scripted model and a real tool,
// in real processes (test/fixtures/agents-turn.mjs) sharing one store.
const TURN = fileURLToPath(new URL("../../fixtures/agents-turn.mjs", import.meta.url));

type Item = Record<string, unknown>;
interface Line {
  ack?: number;
  items?: Item[];
  tail?: Item[];
  final?: string;
  waiting?: boolean;
  model?: { turn: number; inputItems: number; answered: boolean };
  tool?: string;
}

function agents(home: string, sessionId: string, mode: string, input?: string): Child {
  return spawnNode([TURN, JSON.stringify({ home, sessionId, mode, input })]);
}

function parsed(child: Child): Line[] {
  return child.lines.map((l) => JSON.parse(l) as Line);
}

async function finished(child: Child): Promise<Line[]> {
  expect(await child.exited).toEqual({ code: 0, signal: null });
  return parsed(child);
}

describe("OpenAI Agents sessions on hearth across processes", () => {
  it("a turn run in one process is read, whole and in order, by another, which continues it", async () => {
    const home = tempHome();
    const first = await finished(agents(home, "chat-1", "turn", "add 2 and 1"));
    const turn1 = first.find((l) => l.final !== undefined)!;
    expect(turn1.final).toBe("2 + 1 = 3");
    expect(first.filter((l) => l.tool === "add")).toHaveLength(1);
    // user input, the tool call, its result, the answer: exactly what the SDK gave addItems.
    const acked = first.filter((l) => l.ack !== undefined).flatMap((l) => l.items!);
    expect(acked.map((i) => i.type)).toEqual([
      "message",
      "function_call",
      "function_call_result",
      "message",
    ]);
    expect(turn1.items).toEqual(acked);

    const read = (await finished(agents(home, "chat-1", "read"))).find((l) => l.items)!;
    expect(read.items).toEqual(acked);
    expect(read.tail).toEqual(acked.slice(-2));

    // A streamed run in a third process sees the history as its model input.
    const next = await finished(agents(home, "chat-1", "stream", "now 2 and 2"));
    expect(next.find((l) => l.model)?.model).toEqual({ turn: 2, inputItems: 5, answered: false });
    expect(next.find((l) => l.final !== undefined)?.final).toBe("2 + 2 = 4");
    const all = (await finished(agents(home, "chat-1", "read"))).find((l) => l.items)!.items!;
    expect(all).toHaveLength(8);
    expect(all.slice(0, 4)).toEqual(acked);
  });

  it("a kill -9 mid-run keeps every item acknowledged before it, and the next run goes on from them", async () => {
    const home = tempHome();
    const doomed = agents(home, "chat-2", "hang", "add 2 and 1");
    // The second turn ran its tool and waits for the model's answer when it dies.
    await doomed.json<Line>((l) => l.waiting === true, "the second turn's final request");
    expect(parsed(doomed).filter((l) => l.tool === "add")).toHaveLength(2);
    const acked = parsed(doomed)
      .filter((l) => l.ack !== undefined)
      .flatMap((l) => l.items!);
    expect(acked).toHaveLength(4);
    expect((await doomed.kill("SIGKILL")).signal).toBe("SIGKILL");

    const read = (await finished(agents(home, "chat-2", "read"))).find((l) => l.items)!;
    expect(read.items).toEqual(acked);

    const resumed = await finished(agents(home, "chat-2", "turn", "and again"));
    expect(resumed.find((l) => l.final !== undefined)?.final).toBe("2 + 2 = 4");
    expect(resumed.find((l) => l.model)?.model?.inputItems).toBe(5);

    const store = await openStore({ home });
    const path = store.path;
    const messages = await store.messages.load("chat-2");
    expect(messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(messages[1]?.toolCallId).toBe("call-1");
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});
