import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AcpChild } from "../../helpers/acp.js";
import { withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { linesIn as runs } from "../../helpers/tool-fake.js";

const TOOLS = join(import.meta.dirname, "../../fixtures/test-tools.mjs");

function home() {
  const h = tempHome();
  const file = join(h, "guarded.log");
  writeConfig(h, {
    gateway: {
      responder: {
        kind: "script",
        script: [
          { content: "", toolCalls: [{ name: "guarded_tool", arguments: { note: "acp" } }] },
          { content: "done" },
        ],
      },
    },
    tools: { enabled: ["guarded_tool"], modules: [TOOLS], settings: { guarded_tool: { file } } },
  });
  return { h, file };
}

const statuses = (h: string, sessionId: string) =>
  withStore(h, async (s) =>
    (await s.messages.load(sessionId))
      .filter((m) => m.role === "tool")
      .map((m) => (m.content as { status: string }).status),
  );

describe("hearth acp asks the editor before a tool acts (session/request_permission)", () => {
  it("allow always: the tool runs, and the session asks no more, also in a new process; another session asks again", async () => {
    const { h, file } = home();
    const editor = new AcpChild(h);
    editor.answerPermission = () => ({
      outcome: { outcome: "selected", optionId: "allow_always" },
    });
    await editor.initialize();
    const sid = await editor.newSession();
    expect(await editor.prompt(sid, "write")).toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests).toHaveLength(1);
    const [asked] = editor.permissionRequests;
    expect(asked).toMatchObject({
      sessionId: sid,
      toolCall: { title: 'guarded_tool: "acp"', status: "pending", rawInput: { note: "acp" } },
    });
    expect(asked!.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow_once", "allow_once"],
      ["allow_always", "allow_always"],
      ["reject", "reject_once"],
    ]);
    expect(runs(file)).toBe(1);
    expect(await editor.close()).toEqual({ code: 0, signal: null });

    // "Always" is in the store: a new process on the same session does not ask.
    const next = new AcpChild(h);
    await next.initialize();
    expect(await next.prompt(sid, "write again")).toEqual({ stopReason: "end_turn" });
    expect(next.permissionRequests).toHaveLength(0);
    expect(runs(file)).toBe(2);
    expect(await statuses(h, sid)).toEqual(["ok", "ok"]);
    const grant = await withStore(h, (s) => s.toolPermissions.granted(sid, "guarded_tool"));
    expect(grant).toBe(true);

    // Another session is asked again; rejected, the tool does not run.
    next.answerPermission = () => ({ outcome: { outcome: "selected", optionId: "reject" } });
    const other = await next.newSession();
    expect(await next.prompt(other, "write")).toEqual({ stopReason: "end_turn" });
    expect(next.permissionRequests).toHaveLength(1);
    expect(runs(file)).toBe(2);
    expect(await statuses(h, other)).toEqual(["denied"]);
    const failed = next.updates.filter(
      (u) =>
        u.sessionId === other &&
        u.update.sessionUpdate === "tool_call_update" &&
        u.update.status === "failed",
    );
    expect(failed).toHaveLength(1);
    expect(await next.close()).toEqual({ code: 0, signal: null });
  });

  it("allow once asks again next time; an editor that cancels the request leaves the call not run", async () => {
    const { h, file } = home();
    const editor = new AcpChild(h);
    editor.answerPermission = () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await editor.initialize();
    const sid = await editor.newSession();
    await editor.prompt(sid, "write");
    editor.answerPermission = () => ({ outcome: { outcome: "cancelled" } });
    await editor.prompt(sid, "write again");
    expect(editor.permissionRequests).toHaveLength(2);
    expect(runs(file)).toBe(1);
    expect(await statuses(h, sid)).toEqual(["ok", "cancelled"]);
    expect(await editor.close()).toEqual({ code: 0, signal: null });
  });
});
