import { describe, expect, it } from "vitest";
import { rejection } from "./errors.js";
import { backends } from "./pg-modules.js";

describe.each(backends)("jsonTail on $name", (backend) => {
  it("reads the last live JSON contents oldest first, in one read", async () => {
    const m = await backend.open();
    const sid = await m.seed.session();
    expect(await m.jsonTail.read(sid)).toEqual([]);
    expect(await m.jsonTail.read(sid, 5)).toEqual([]);
    const items = [
      { type: "message", role: "user", content: "hi" },
      [1, 2, { nested: ["x", null, true] }],
      { type: "function_call", arguments: '{"a":"b\\n"}', unicode: "żółw 🐢" },
      { type: "message", role: "assistant", content: "there" },
    ];
    for (const item of items) await m.seed.append(sid, "assistant", item);
    expect(await m.jsonTail.read(sid)).toEqual(items);
    expect(await m.jsonTail.read(sid, 2)).toEqual(items.slice(2));
    expect(await m.jsonTail.read(sid, 100_000)).toEqual(items);
    // Archived messages are history, not the tail.
    await m.seed.pop(sid);
    expect(await m.jsonTail.read(sid)).toEqual(items.slice(0, 3));
    expect(await m.jsonTail.read(sid, 1)).toEqual([items[2]]);
  });

  it("is undefined when the window holds a text message, and fine when the text is older", async () => {
    const m = await backend.open();
    const sid = await m.seed.session();
    await m.seed.append(sid, "user", "plain text");
    await m.seed.append(sid, "assistant", { a: 1 });
    await m.seed.append(sid, "assistant", { b: 2 });
    expect(await m.jsonTail.read(sid)).toBeUndefined();
    expect(await m.jsonTail.read(sid, 3)).toBeUndefined();
    expect(await m.jsonTail.read(sid, 2)).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it("refuses a missing session, a non-string id and a bad limit", async () => {
    const m = await backend.open();
    expect((await rejection(m.jsonTail.read("no-such"))).code).toBe("HEARTH_SESSION_NOT_FOUND");
    expect(await rejection(m.jsonTail.read(42 as never))).toBeInstanceOf(TypeError);
    const sid = await m.seed.session();
    for (const limit of [0, -1, 1.5, 100_001, Number.NaN])
      expect(await rejection(m.jsonTail.read(sid, limit))).toBeInstanceOf(RangeError);
  });
});
