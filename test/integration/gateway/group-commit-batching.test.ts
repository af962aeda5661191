import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { tempHome } from "../../helpers/home.js";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe("group commit batching", () => {
  it("a caller answered by one commit and appending again joins what arrived during that commit", async () => {
    store = await openStore({ home: tempHome(), config: { durability: { synchronous: "full" } } });
    const session = await store.sessions.create();
    const committer = new GroupCommitter(store, true);
    const sizes: number[] = [];
    const say = (content: string) => committer.append(session.id, { role: "user", content });
    let other: Promise<unknown> | undefined;
    committer.onBatch = (size) => {
      sizes.push(size);
      // Another client's message arrives as the first commit completes,
      // before its callers are answered (on a loaded gateway, while the
      // commit's fsync runs off the event loop).
      if (sizes.length === 1) other = say("other");
    };

    // A turn: its message, then (once that is acknowledged) its reply.
    await say("question").then(() => say("reply"));
    await other;

    // The reply and the other message share the second commit: two commits,
    // not three (each is an fsync at synchronous=FULL).
    expect(sizes).toEqual([1, 2]);
    const stored = await store.messages.load(session.id);
    expect(stored.map((m) => m.content)).toEqual(["question", "other", "reply"]);
  });
});
