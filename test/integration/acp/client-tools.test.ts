import { describe, expect, it } from "vitest";
import { AcpChild } from "../../helpers/acp.js";
import { withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

const PROJECT = "/work/project";
const NOTES = `${PROJECT}/notes.txt`;
const FILES = { fs: { readTextFile: true, writeTextFile: true } };

/** A turn that reads notes.txt through the editor, writes it back changed, then answers. */
function home() {
  const h = tempHome();
  writeConfig(h, {
    gateway: {
      responder: {
        kind: "script",
        script: [
          {
            content: "",
            toolCalls: [{ name: "editor_read_file", arguments: { path: "notes.txt" } }],
          },
          {
            content: "",
            toolCalls: [
              { name: "editor_write_file", arguments: { path: "notes.txt", content: "v2" } },
            ],
          },
          { content: "updated" },
        ],
      },
    },
  });
  return h;
}

const toolRows = (h: string, sessionId: string) =>
  withStore(h, async (s) =>
    (await s.messages.load(sessionId))
      .filter((m) => m.role === "tool")
      .map((m) => [m.name, (m.content as { status: string }).status]),
  );

const allowOnce = () => ({ outcome: { outcome: "selected" as const, optionId: "allow_once" } });

describe("hearth acp uses the editor's files (fs/read_text_file, fs/write_text_file)", () => {
  it("reads a file through the editor, asks before writing it, writes it; an editor without the capability gets no such tools", async () => {
    const h = home();
    const editor = new AcpChild(h);
    await editor.initialize(FILES);
    editor.files.set(NOTES, "v1");
    editor.answerPermission = allowOnce;
    const sid = await editor.newSession(PROJECT);
    expect(await editor.prompt(sid, "update my notes")).toEqual({ stopReason: "end_turn" });
    // The relative path is the session's cwd's; the write waited for the editor's allow.
    expect(editor.permissionRequests.map((r) => r.toolCall.title)).toEqual([
      'editor_write_file: "notes.txt"',
    ]);
    expect(editor.writes).toEqual([{ path: NOTES, content: "v2" }]);
    expect(await toolRows(h, sid)).toEqual([
      ["editor_read_file", "ok"],
      ["editor_write_file", "ok"],
    ]);
    expect(await editor.close()).toEqual({ code: 0, signal: null });

    // Without the capability the model is offered neither tool (the script's calls are not made).
    const plain = new AcpChild(h);
    await plain.initialize();
    const other = await plain.newSession(PROJECT);
    expect(await plain.prompt(other, "update my notes")).toEqual({ stopReason: "end_turn" });
    expect(plain.writes).toEqual([]);
    expect(await toolRows(h, other)).toEqual([]);
    expect(await plain.close()).toEqual({ code: 0, signal: null });
  });

  it("kill -9 while the editor is asked to allow the write: the reopened editor's next prompt asks again, writes once, then answers", async () => {
    const h = home();
    const doomed = new AcpChild(h);
    await doomed.initialize(FILES);
    doomed.files.set(NOTES, "v1");
    const sid = await doomed.newSession(PROJECT);
    doomed.answerPermission = () => {
      doomed.process.child.kill("SIGKILL");
      return new Promise(() => undefined);
    };
    await doomed.prompt(sid, "update my notes").catch(() => undefined);
    expect(await doomed.process.exited).toMatchObject({ signal: "SIGKILL" });
    expect(doomed.writes).toEqual([]);
    expect(await toolRows(h, sid)).toEqual([["editor_read_file", "ok"]]);

    const editor = new AcpChild(h);
    await editor.initialize(FILES);
    editor.files.set(NOTES, "v1");
    editor.answerPermission = allowOnce;
    expect(await editor.prompt(sid, "go on")).toEqual({ stopReason: "end_turn" });
    // The interrupted write: asked again and done once; then the new prompt's own read and write.
    expect(editor.writes).toEqual([
      { path: NOTES, content: "v2" },
      { path: NOTES, content: "v2" },
    ]);
    expect(editor.permissionRequests).toHaveLength(2);
    expect(await toolRows(h, sid)).toEqual([
      ["editor_read_file", "ok"],
      ["editor_write_file", "ok"],
      ["editor_read_file", "ok"],
      ["editor_write_file", "ok"],
    ]);
    expect(await editor.close()).toEqual({ code: 0, signal: null });
  });

  it("runs a command in the editor's terminal after the editor allows it", async () => {
    const h = tempHome();
    writeConfig(h, {
      gateway: {
        responder: {
          kind: "script",
          script: [
            {
              content: "",
              toolCalls: [{ name: "editor_run_command", arguments: { command: "pwd" } }],
            },
            { content: "ran" },
          ],
        },
      },
    });
    const editor = new AcpChild(h);
    await editor.initialize({ terminal: true });
    editor.answerPermission = allowOnce;
    const sid = await editor.newSession("/tmp");
    expect(await editor.prompt(sid, "where am I")).toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests.map((r) => r.toolCall.title)).toEqual([
      'editor_run_command: "pwd"',
    ]);
    expect([...editor.terminals.values()].map((t) => t.argv)).toEqual([["pwd"]]);
    const output = await withStore(h, async (s) =>
      (await s.messages.load(sid)).find((m) => m.role === "tool"),
    );
    expect(output?.content).toMatchObject({ status: "ok", output: "exit 0\n/tmp\n" });
    expect(await editor.close()).toEqual({ code: 0, signal: null });
  });
});
