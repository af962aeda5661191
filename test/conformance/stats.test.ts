import { describe, expect, it } from "vitest";
import { backends } from "./pg-modules.js";

const DAY = 86_400_000;
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

describe.each(backends)("health samples on $name", (backend) => {
  it("records a sample unless a recent one exists, reads it back, and trims old ones", async () => {
    const m = await backend.open();
    expect(await m.stats.latest()).toBeNull();
    const sid = await m.seed.session();
    const { id: lastId } = await m.seed.append(sid, "user", "hello");
    const before = Date.now();
    const first = await m.stats.record({ minIntervalMs: 60_000, keepMs: DAY });
    expect(first).not.toBeNull();
    expect(first!.at).toBeGreaterThanOrEqual(before);
    expect(first!.lastMessageId).toBe(lastId);
    expect(first!.databaseBytes).toBeGreaterThan(0);
    expect(Number.isSafeInteger(first!.walBytes)).toBe(true);
    if (backend.name === "postgres") expect(first!.walBytes).toBe(0);
    // A sample younger than minIntervalMs exists: nothing written.
    expect(await m.stats.record({ minIntervalMs: 60_000, keepMs: DAY })).toBeNull();
    expect(await m.stats.latest()).toEqual(first);
    await tick();
    await m.seed.append(sid, "user", "again");
    const second = await m.stats.record({ minIntervalMs: 0, keepMs: DAY });
    expect(second!.lastMessageId).toBe(lastId + 1);
    expect(await m.stats.latest()).toEqual(second);
    expect(await m.stats.samples({ since: 0 })).toEqual([first, second]);
    expect(await m.stats.samples({ since: 0, limit: 1 })).toEqual([first]);
    expect(await m.stats.samples({ since: second!.at })).toEqual([second]);
    // keepMs 0 deletes every sample older than the one just written.
    await tick();
    const third = await m.stats.record({ minIntervalMs: 0, keepMs: 0 });
    expect(await m.stats.samples({ since: 0 })).toEqual([third]);
  });

  it("current() samples this instant without storing it; days() charts messages per day", async () => {
    const m = await backend.open();
    const sid = await m.seed.session();
    await m.seed.append(sid, "user", "one");
    await m.stats.record({ minIntervalMs: 0, keepMs: DAY });
    await tick();
    for (const text of ["two", "three", "four"]) await m.seed.append(sid, "user", text);
    const sample = await m.stats.record({ minIntervalMs: 0, keepMs: DAY });
    const now = await m.stats.current();
    expect(now.lastMessageId).toBe(sample!.lastMessageId);
    expect(now.databaseBytes).toBeGreaterThan(0);
    expect((await m.stats.samples({ since: 0 })).length).toBe(2);
    const today = sample!.at - (sample!.at % DAY);
    expect(await m.stats.days({ since: today })).toEqual([
      { day: today, databaseBytes: sample!.databaseBytes, walBytes: sample!.walBytes, messages: 3 },
    ]);
    await tick();
    await m.seed.append(sid, "user", "five");
    const later = await m.stats.current();
    const days = await m.stats.days({ since: today, now: later });
    expect(days.map((d) => [d.day, d.messages])).toEqual([[today, 4]]);
    expect(await m.stats.days({ since: today + DAY })).toEqual([]);
  });

  it("two connections sampling at once write one sample", async () => {
    for (let round = 0; round < 3; round++) {
      const m = await backend.open();
      const other = await m.reopen();
      const samples = await Promise.all(
        [m, other, m, other, m, other].map((x) =>
          x.stats.record({ minIntervalMs: 60_000, keepMs: DAY }),
        ),
      );
      expect(
        samples.filter((s) => s !== null),
        `round ${round}`,
      ).toHaveLength(1);
      expect(await m.stats.samples({ since: 0 })).toHaveLength(1);
    }
  });
});
