/**
 * Sessions get a title from their first exchange (issue 47): every gateway
 * session was "Untitled <hash>". The title is automatic (`titleSource:
 * "auto"`), written after the reply without delaying it, and never replaces
 * a title a user gave.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { titleFromText } from "../../../src/turn/auto-title.js";
import { startGateway, withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

describe("automatic session titles", () => {
  it("titles a new chat's session from its first message, automatically, after the reply", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const first = await gw.post({
      platform: "telegram",
      chat: "big-1",
      content: "## Plan a **weekend** in Lisbon. Museums, food and a day trip?",
    });
    expect(first.status).toBe(200);
    const sid = first.body.session.id as string;
    let seen: { title: string | null; titleSource: string | null } | undefined;
    await until("the automatic title", async () => {
      seen = await withStore(home, async (s) => (await s.sessions.get(sid)) ?? undefined);
      return seen?.title !== null;
    });
    expect(seen).toMatchObject({ title: "Plan a weekend in Lisbon", titleSource: "auto" });
    // Later exchanges leave it alone.
    await gw.post({ platform: "telegram", chat: "big-1", content: "Something else entirely" });
    await withStore(home, async (s) =>
      expect((await s.sessions.get(sid))?.title).toBe("Plan a weekend in Lisbon"),
    );
  });

  it("never replaces a title a user gave before the first exchange", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const writer = await openStore({ home });
    const sid = (await writer.sessions.create({ source: "web", chatKey: "mine", title: "Mine" }))
      .id;
    await writer.close();
    await gw.post({ platform: "web", chat: "mine", content: "A question about taxes" });
    // The next exchange has been answered, so any automatic title of the first would be in.
    await gw.post({ platform: "web", chat: "mine", content: "And another" });
    await withStore(home, async (s) =>
      expect(await s.sessions.get(sid)).toMatchObject({ title: "Mine", titleSource: "user" }),
    );
  });

  it("titleFromText: the first sentence, marks dropped, cut at a word", () => {
    expect(titleFromText("hello")).toBe("hello");
    expect(titleFromText("```js\ncode()\n```\n\n- Fix the [build](http://x) now. Then more")).toBe(
      "Fix the build now",
    );
    const long = titleFromText(`${"word ".repeat(30)}end`)!;
    expect(long.length).toBeLessThanOrEqual(61);
    expect(long.endsWith("word…")).toBe(true);
    expect(titleFromText({ json: true })).toBeNull();
    expect(titleFromText("```\nonly code\n```")).toBeNull();
  });
});
