import http from "node:http";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

const MESSAGES = 20_000;

/** A home whose store holds one session of MESSAGES messages (~10 MB of JSON: several parts). */
async function longTranscript(): Promise<{ home: string; id: string }> {
  const home = tempHome();
  writeConfig(home, { store: { readerThreads: 1 } });
  const store = await openStore({ home });
  const session = await store.sessions.create({ title: "long" });
  for (let i = 0; i < MESSAGES; i += 1000) {
    await store.messages.appendBatch(
      session.id,
      Array.from({ length: 1000 }, (_, j) => ({
        role: j % 2 ? ("assistant" as const) : ("user" as const),
        content: `message ${i + j}: ${"the harbour lights were counted again at dusk ".repeat(8)}`,
      })),
    );
  }
  await store.close();
  return { home, id: session.id };
}

/** GET `url`, read the first chunk of the body, then drop the connection. */
function readFirstChunkAndHangUp(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      res.once("data", (chunk: Buffer) => {
        req.destroy();
        resolve(chunk.length);
      });
    });
    req.on("error", (err) => {
      if (!req.destroyed) reject(err);
    });
  });
}

describe("gateway: a long transcript", () => {
  it("streams every message of a 20,000-message session, and serves on after a reader hangs up mid-transcript", async () => {
    const { home, id } = await longTranscript();
    const gw = await startGateway(home);
    const whole = await gw.get(`/v1/sessions/${id}`);
    expect(whole.status).toBe(200);
    expect(whole.body.session.id).toBe(id);
    const messages = whole.body.messages as { ordinal: number; content: string }[];
    expect(messages).toHaveLength(MESSAGES);
    expect(messages.map((m) => m.ordinal)).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
    expect(messages.at(-1)!.content.startsWith(`message ${MESSAGES - 1}:`)).toBe(true);

    // Readers that hang up after the first bytes: the transcript's rows on the thread are dropped,
    // and the next readers get whole transcripts from the same (single) thread.
    for (let i = 0; i < 3; i++) {
      expect(await readFirstChunkAndHangUp(gw.url(`/v1/sessions/${id}`))).toBeGreaterThan(0);
    }
    const turn = await gw.post({ platform: "test", chat: "after", content: "still there?" });
    expect(turn.status).toBe(200);
    const again = await gw.get(`/v1/sessions/${id}`);
    expect(again.body.messages).toHaveLength(MESSAGES);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(whole.body));
  });
});
