import { describe, expect, it } from "vitest";
import { rejection } from "./errors.js";
import { backends, type Modules } from "./pg-modules.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
const ids = (sessions: { id: string }[]) => sessions.map((s) => s.id);

/** Sessions s-1 .. s-n created in order (so newest first is s-n .. s-1). */
async function sessions(
  m: Modules,
  specs: { source?: string; chatKey?: string; title?: string; parentId?: string }[],
) {
  const out: string[] = [];
  for (const [i, spec] of specs.entries()) {
    out.push(await m.seed.session({ id: `s-${i + 1}`, ...spec }));
    await tick();
  }
  return out;
}

describe.each(backends)("browse on $name", (backend) => {
  it("pages sessions newest activity first, by state, source, text and time, with a keyset", async () => {
    const m = await backend.open();
    await sessions(m, [
      { source: "cli", title: "Groceries" },
      { source: "telegram", title: "100% done_now" },
      { source: "cli", title: "Trip to Lisbon" },
      { source: "http", chatKey: "big-1" },
      { source: "cli", title: "Archived one" },
      { source: "cli", title: "Hidden one" },
    ]);
    await m.seed.set("s-5", { archived: true });
    await m.seed.set("s-6", { hidden: true });
    await m.seed.set("s-3", { ended: true, pinned: true });
    expect(ids(await m.browse.sessions({ limit: 50 }))).toEqual(["s-4", "s-3", "s-2", "s-1"]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "open" }))).toEqual([
      "s-4",
      "s-2",
      "s-1",
    ]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "ended" }))).toEqual(["s-3"]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "pinned" }))).toEqual(["s-3"]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "archived" }))).toEqual(["s-5"]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "hidden" }))).toEqual(["s-6"]);
    expect(ids(await m.browse.sessions({ limit: 50, state: "all" }))).toEqual([
      "s-6",
      "s-5",
      "s-4",
      "s-3",
      "s-2",
      "s-1",
    ]);
    await expect(m.browse.sessions({ limit: 5, state: "bogus" as never })).rejects.toBeInstanceOf(
      RangeError,
    );
    expect(ids(await m.browse.sessions({ limit: 50, source: "cli" }))).toEqual(["s-3", "s-1"]);
    // Text: a case-insensitive substring of the title or a prefix of the id, matched literally.
    expect(ids(await m.browse.sessions({ limit: 50, text: "LISBON" }))).toEqual(["s-3"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "0% d" }))).toEqual(["s-2"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "%" }))).toEqual(["s-2"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "e_n" }))).toEqual(["s-2"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "_" }))).toEqual(["s-2"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "S-4" }))).toEqual(["s-4"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "-4" }))).toEqual([]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "\\" }))).toEqual([]);
    // A chat key anywhere, a platform by its start (issue 47: `big-1` found nothing).
    expect(ids(await m.browse.sessions({ limit: 50, text: "BIG-1" }))).toEqual(["s-4"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "g-1" }))).toEqual(["s-4"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "tele" }))).toEqual(["s-2"]);
    expect(ids(await m.browse.sessions({ limit: 50, text: "legram" }))).toEqual([]);
    // Keyset pages: limit and after.
    const page1 = await m.browse.sessions({ limit: 2, state: "all" });
    expect(ids(page1)).toEqual(["s-6", "s-5"]);
    const last = page1[1]!;
    const page2 = await m.browse.sessions({
      limit: 2,
      state: "all",
      after: { lastActivityAt: last.lastActivityAt, id: last.id },
    });
    expect(ids(page2)).toEqual(["s-4", "s-3"]);
    // The keyset is (lastActivityAt, id): at the same instant, the id orders them (newest first).
    const all = await m.browse.sessions({ limit: 50, state: "all" });
    const at = all.find((s) => s.id === "s-3")!.lastActivityAt;
    expect(
      ids(
        await m.browse.sessions({
          limit: 50,
          state: "all",
          after: { lastActivityAt: at, id: "s-4" },
        }),
      ),
    ).toEqual(["s-3", "s-2", "s-1"]);
    // Time window.
    const s2 = all.find((s) => s.id === "s-2")!.lastActivityAt;
    const s4 = all.find((s) => s.id === "s-4")!.lastActivityAt;
    expect(ids(await m.browse.sessions({ limit: 50, activeSince: s2, activeBefore: s4 }))).toEqual([
      "s-3",
      "s-2",
    ]);
    // Rows come back as sessions with numbers, not strings.
    const [s] = await m.browse.sessions({ limit: 1, state: "pinned" });
    expect(s).toMatchObject({
      id: "s-3",
      pinned: true,
      archived: false,
      hidden: false,
      source: "cli",
      title: "Trip to Lisbon",
    });
    for (const k of [
      "createdAt",
      "updatedAt",
      "lastActivityAt",
      "endedAt",
      "messageCount",
      "tokenCount",
    ] as const)
      expect(typeof s![k], k).toBe("number");
  });

  it("sessionsById keeps the asked order and leaves missing ones out; children newest first; platforms sorted", async () => {
    const m = await backend.open();
    await sessions(m, [
      { source: "telegram" },
      { source: "cli", parentId: "s-1" },
      { source: "Zulip", parentId: "s-1" },
      { source: "cli" },
    ]);
    expect(ids(await m.browse.sessionsById(["s-3", "nope", "s-1", "s-3"]))).toEqual(["s-3", "s-1"]);
    expect(await m.browse.sessionsById([])).toEqual([]);
    expect(ids(await m.browse.children("s-1"))).toEqual(["s-3", "s-2"]);
    expect(ids(await m.browse.children("s-1", 1))).toEqual(["s-3"]);
    expect(await m.browse.children("s-4")).toEqual([]);
    // Byte order, as SQLite's BINARY collation: upper case before lower case.
    expect(await m.browse.platforms()).toEqual(["Zulip", "cli", "telegram"]);
  });

  it("pages a transcript newest first; history only when asked; a missing session is HEARTH_SESSION_NOT_FOUND", async () => {
    const m = await backend.open();
    const sid = await m.seed.session();
    for (const text of ["a", "b", "c", "d"]) await m.seed.append(sid, "user", text);
    await m.seed.append(sid, "assistant", { parts: ["e"] });
    await m.seed.pop(sid);
    const live = await m.browse.transcript(sid, { limit: 10 });
    expect(live.map((x) => [x.ordinal, x.content])).toEqual([
      [3, "d"],
      [2, "c"],
      [1, "b"],
      [0, "a"],
    ]);
    expect(live[0]).toMatchObject({
      sessionId: sid,
      role: "user",
      active: true,
      archivedReason: null,
    });
    expect(typeof live[0]!.id).toBe("number");
    expect(typeof live[0]!.createdAt).toBe("number");
    expect((await m.browse.transcript(sid, { limit: 2, before: 3 })).map((x) => x.content)).toEqual(
      ["c", "b"],
    );
    const history = await m.browse.transcript(sid, { limit: 2, includeHistory: true });
    expect(history.map((x) => [x.content, x.active])).toEqual([
      [{ parts: ["e"] }, false],
      ["d", true],
    ]);
    const empty = await m.seed.session();
    expect(await m.browse.transcript(empty, { limit: 10 })).toEqual([]);
    expect((await rejection(m.browse.transcript("no-such", { limit: 10 }))).code).toBe(
      "HEARTH_SESSION_NOT_FOUND",
    );
  });

  it("change probes: dataVersion moves when another connection writes; messagesAfter reads what came after", async () => {
    const m = await backend.open();
    const other = await m.reopen();
    expect(await m.browse.lastMessageId()).toBe(0);
    const v0 = await m.browse.dataVersion();
    expect(Number.isSafeInteger(v0)).toBe(true);
    if (backend.name === "sqlite") expect(await m.browse.dataVersion()).toBe(v0);
    const a = await other.seed.session({ id: "a" });
    const b = await other.seed.session({ id: "b" });
    const v1 = await m.browse.dataVersion();
    expect(v1).not.toBe(v0);
    const written: number[] = [];
    for (const [sid, text] of [
      [a, "1"],
      [b, "2"],
      [a, "3"],
      [b, "4"],
      [a, "5"],
    ] as const)
      written.push((await other.seed.append(sid, "user", text)).id);
    expect(await m.browse.dataVersion()).not.toBe(v1);
    expect(await m.browse.lastMessageId()).toBe(written[4]);
    const after = await m.browse.messagesAfter(written[0]!, 10);
    expect(after.map((x) => x.content)).toEqual(["2", "3", "4", "5"]);
    expect((await m.browse.messagesAfter(0, 2)).map((x) => x.content)).toEqual(["1", "2"]);
    expect(
      (await m.browse.messagesAfter(0, 10, { uptoId: written[2] })).map((x) => x.content),
    ).toEqual(["1", "2", "3"]);
    expect(
      (await m.browse.messagesAfter(0, 10, { sessionIds: [b] })).map((x) => x.content),
    ).toEqual(["2", "4"]);
    expect(
      (
        await m.browse.messagesAfter(written[1]!, 10, {
          sessionIds: [a, "nope"],
          uptoId: written[3],
        })
      ).map((x) => x.content),
    ).toEqual(["3"]);
    expect(await m.browse.messagesAfter(0, 10, { sessionIds: [] })).toEqual([]);
    // An archived message (a pop) is a change too.
    const v2 = await m.browse.dataVersion();
    await other.seed.pop(a);
    expect(await m.browse.dataVersion()).not.toBe(v2);
  });
  it("activity: messages, turns, failed turns and turn latency per day and platform (issue 47)", async () => {
    const m = await backend.open();
    const [web, cli] = await sessions(m, [{ source: "web" }, { source: "cli" }]);
    for (let i = 0; i < 3; i++) {
      await m.seed.append(web!, "user", `question ${i}`);
      await tick();
      await m.seed.append(web!, "assistant", `answer ${i}`);
    }
    await m.seed.append(cli!, "user", "will fail");
    await m.seed.append(cli!, "assistant", { error: "boom" }, "hearth.turn_failed");
    const day = 86_400_000;
    const rows = await m.browse.activity({ since: Date.now() - day, bucketMs: day });
    const bySource = Object.fromEntries(rows.map((r) => [r.source, r]));
    expect(bySource.web).toMatchObject({ messages: 6, turns: 3, errors: 0 });
    expect(bySource.cli).toMatchObject({ messages: 2, turns: 1, errors: 1 });
    expect(bySource.web!.p50Ms).toBeGreaterThanOrEqual(0);
    expect(bySource.web!.p95Ms).toBeGreaterThanOrEqual(bySource.web!.p50Ms!);
    expect(rows.every((r) => r.at % day === 0)).toBe(true);
    // Nothing since a time after every message.
    expect(await m.browse.activity({ since: Date.now() + 1000, bucketMs: day })).toEqual([]);
    await expect(m.browse.activity({ since: 0, bucketMs: 10 })).rejects.toBeInstanceOf(RangeError);
  });
  it("activity: tokens per bucket and per model, from metadata.model (issue 47)", async () => {
    const m = await backend.open();
    const [web] = await sessions(m, [{ source: "web" }]);
    await m.seed.append(web!, "user", "q");
    await m.seed.append(web!, "assistant", "a", undefined, {
      tokensIn: 100,
      tokensOut: 7,
      model: "a",
    });
    await m.seed.append(web!, "user", "q");
    await m.seed.append(web!, "assistant", "b", undefined, {
      tokensIn: 50,
      tokensOut: 3,
      model: "a",
    });
    await m.seed.append(web!, "assistant", "c", undefined, {
      tokensIn: 9,
      tokensOut: 1,
      model: "b",
    });
    const day = 86_400_000;
    const [bucket] = await m.browse.activity({ since: Date.now() - day, bucketMs: day });
    expect(bucket).toMatchObject({ tokensIn: 159, tokensOut: 11 });
    expect(bucket!.usage).toEqual([
      { model: "a", tokensIn: 150, tokensOut: 10 },
      { model: "b", tokensIn: 9, tokensOut: 1 },
    ]);
  });
});
