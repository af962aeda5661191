import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage, Session, Store, TranscriptEntry } from "../../src/index.js";
import { backends, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("transcript-identity on $name", (backend) => {
  /** D3: loading a transcript and saving it again never duplicates rows. */

  const homes = new TestHomes(backend);
  let store: Store;
  let session: Session;

  function conversation(n: number, prefix = "turn"): NewMessage[] {
    return Array.from({ length: n }, (_, i) => ({
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: i % 5 === 4 ? { prefix, i } : `${prefix} ${i}`,
      tokensIn: i,
    }));
  }

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    session = await store.sessions.create({ title: "Long chat" });
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("messages.save (D3)", () => {
    it("adds exactly the new entries of a loaded transcript, and nothing when saved again", async () => {
      await store.messages.appendBatch(session.id, conversation(50));
      const transcript: TranscriptEntry[] = await store.messages.load(session.id);
      expect(transcript).toHaveLength(50);
      expect(transcript.every((m) => typeof m.id === "number")).toBe(true);

      transcript.push(
        { role: "user", content: "new question" },
        { role: "assistant", content: { answer: "new answer" } },
      );
      const added = await store.messages.save(session.id, transcript);
      expect(added.map((m) => [m.ordinal, m.content])).toEqual([
        [50, "new question"],
        [51, { answer: "new answer" }],
      ]);
      expect((await store.counts()).messages).toBe(52);
      expect((await store.sessions.require(session.id)).messageCount).toBe(52);

      // Saving the same loaded transcript again adds nothing.
      const reloaded = await store.messages.load(session.id);
      expect(await store.messages.save(session.id, reloaded)).toEqual([]);
      expect((await store.counts()).messages).toBe(52);
      expect(await store.messages.load(session.id)).toEqual(reloaded);
    });

    it("keeps identity through a JSON round trip (a transcript written to disk and read back)", async () => {
      await store.messages.appendBatch(session.id, conversation(10));
      const onDisk = JSON.stringify(await store.messages.load(session.id));
      const restored = JSON.parse(onDisk) as TranscriptEntry[];
      restored.push({ role: "user", content: "after restart" });
      const added = await store.messages.save(session.id, restored);
      expect(added).toHaveLength(1);
      expect((await store.counts()).messages).toBe(11);
    });

    it('field story "998 rows became 7,981": load + save in a loop never changes the row count', async () => {
      await store.messages.appendBatch(session.id, conversation(998));
      const before = await store.counts();
      expect(before.messages).toBe(998);
      for (let round = 0; round < 5; round++) {
        const transcript = await store.messages.load(session.id);
        expect(transcript).toHaveLength(998);
        expect(await store.messages.save(session.id, transcript)).toEqual([]);
        expect(await store.counts()).toEqual(before);
        expect((await store.sessions.require(session.id)).messageCount).toBe(998);
      }
      const ordinals = (await store.messages.load(session.id)).map((m) => m.ordinal);
      expect(ordinals).toEqual(Array.from({ length: 998 }, (_, i) => i));
    });

    it("a loaded transcript that includes history saves without reviving or duplicating it", async () => {
      await store.messages.appendBatch(session.id, conversation(6));
      await store.messages.rewind(session.id, 2);
      const all = await store.messages.load(session.id, { includeHistory: true });
      expect(await store.messages.save(session.id, all)).toEqual([]);
      expect(await store.counts()).toMatchObject({
        messages: 6,
        activeMessages: 3,
        archivedMessages: 3,
      });
    });

    it("refuses an entry whose id belongs to another session, and writes nothing", async () => {
      const other = await store.sessions.create();
      await store.messages.appendBatch(session.id, conversation(3));
      await store.messages.appendBatch(other.id, conversation(3, "other"));
      const foreign = await store.messages.load(other.id);
      const before = await store.counts();

      const mixed: TranscriptEntry[] = [
        ...(await store.messages.load(session.id)),
        { role: "user", content: "would be new" },
        foreign[1]!,
        { role: "assistant", content: "also new" },
      ];
      await expect(store.messages.save(session.id, mixed)).rejects.toThrow(RangeError);
      expect(await store.counts()).toEqual(before);
      expect(await store.messages.load(session.id)).toHaveLength(3);
      expect(await store.messages.load(other.id)).toEqual(foreign);
      // The refused save consumed no ordinal.
      const next = await store.messages.append(session.id, { role: "user", content: "next" });
      expect(next.ordinal).toBe(3);
    });

    it("refuses an entry whose id is not a stored message at all", async () => {
      await store.messages.appendBatch(session.id, conversation(2));
      const before = await store.counts();
      await expect(
        store.messages.save(session.id, [
          { role: "user", content: "new" },
          { id: 987_654, role: "user", content: "invented" },
        ]),
      ).rejects.toThrow(RangeError);
      expect(await store.counts()).toEqual(before);
    });

    it("to an unknown session with new entries is HEARTH_SESSION_NOT_FOUND and writes nothing", async () => {
      await expectHearthError(
        store.messages.save("nope", [{ role: "user", content: "x" }]),
        "HEARTH_SESSION_NOT_FOUND",
      );
      expect((await store.counts()).messages).toBe(0);
    });
  });
});
