import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";

const HOLDERS = fileURLToPath(new URL("../../fixtures/snapshot-holders.mjs", import.meta.url));

// Readers that outlast the final checkpoint's 25 ms wait every time: three
// connections of another process, each holding a snapshot for 60 ms, back
// to back, their starts 20 ms apart, so one of them always began a read
// within the last 20 ms. The WAL doubles the thresholds it waits from up to
// 64, and from there doubles the wait instead (src/store/sqlite/wal-sync/
// checkpoints.ts, READER_WAIT_MAX_MS): at 100–200 ms the readers from
// before the copy have finished, and the WAL starts over. With the wait
// kept at 25 ms the WAL grew by a threshold at every checkpoint for as long
// as the reads went on (wal-held-by-readers.test.ts holds the readers of a
// starved machine to the same bound).

describe("the WAL under readers that outlast every short wait (C2)", () => {
  it(
    "stops growing at 64 thresholds: the wait, not the WAL, grows",
    { timeout: 180_000 },
    async () => {
      const home = tempHome();
      const pages = 50;
      const config = {
        durability: { walAutocheckpointPages: pages, journalSizeLimitBytes: 1 << 20 },
      };
      const store = await openStore({ home, config });
      const session = await store.sessions.create({ title: "held" });
      const text = "x".repeat(3000);
      for (let i = 0; i < 20; i++)
        await store.messages.append(session.id, { role: "user", content: `${text} ${i}` });
      const holders = spawnNode([HOLDERS, store.path, "60", "3"]);
      try {
        await holders.line((l) => l === "ready");
        const sizes: number[] = [];
        for (let i = 0; i < 600; i++) {
          await store.messages.append(session.id, { role: "user", content: `${text} ${i}` });
          sizes.push(statSync(`${store.path}-wal`).size);
        }
        const frame = 4096 + 24;
        const max = Math.max(...sizes);
        // The readers were still reading (each read holds 60 ms: over 10 is past the writes' start).
        await holders.line((l) => l.startsWith("reads ") && Number(l.slice(6)) > 10);
        // It grew past the first waits' 8 thresholds (the readers did hold it)...
        expect(max).toBeGreaterThan(32 + 16 * pages * frame);
        // Bounded by 64 thresholds, and the checkpoints at the cap whose waits
        // the readers outlast before one is long enough (25, 50, 100 ms; each
        // about a threshold and what was committed meanwhile: 3,300–3,630
        // frames measured at the start-over), not by what was written (about
        // 9,000 frames: with the wait kept at 25 ms the WAL reached that).
        expect(max, `largest WAL ${max} bytes`).toBeLessThan(32 + 80 * pages * frame);
        // And it started over: the file was cut back below what it had reached.
        expect(sizes.some((size, i) => i > 0 && size < sizes[i - 1]!)).toBe(true);
      } finally {
        await holders.kill("SIGKILL");
        await store.close();
      }
    },
  );
});
