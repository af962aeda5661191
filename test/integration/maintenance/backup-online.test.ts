import { readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { backup } from "../../../src/ops/backup.js";
import type { StepProgress } from "../../../src/store/progress.js";
import { tempHome } from "../../helpers/home.js";

describe("backup() in-process, off the event loop", () => {
  it("copies one snapshot while this process commits between its steps, and reports every step", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const s = await store.sessions.create({ title: "big" });
    const text = "z".repeat(2000);
    for (let b = 0; b < 8; b++)
      await store.messages.appendBatch(
        s.id,
        Array.from({ length: 1000 }, (_, i) => ({
          role: "user" as const,
          content: `${b}-${i} ${text}`,
        })),
      );
    const before = (await store.counts()).messages;
    const steps: StepProgress[] = [];
    let writes = Promise.resolve();
    let written = 0;
    const result = await backup(store, {
      onProgress: (p) => {
        steps.push(p);
        // A writer on this process's own writer connection commits after every step.
        if (p.phase === "copy" && p.done < p.total) {
          written++;
          writes = writes.then(async () => {
            await store.messages.append(s.id, { role: "user", content: `during ${p.done}` });
          });
        }
      },
    });
    await writes;
    expect(written).toBeGreaterThan(2); // the copy took several steps, with commits in between
    expect((await store.counts()).messages).toBe(before + written);
    await store.close();

    const copy = new Database(result.path, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma("quick_check", { simple: true })).toBe("ok");
      // The database as of one instant: the instant before the first step.
      expect(copy.prepare("SELECT count(*) FROM messages").pluck().get()).toBe(before);
    } finally {
      copy.close();
    }
    // One file in rollback-journal mode, like any copy a user opens or restores.
    const header = readFileSync(result.path).subarray(18, 20);
    expect([...header]).toEqual([1, 1]);
    const copyPhase = steps.filter((p) => p.phase === "copy");
    expect(copyPhase.map((p) => p.done)).toEqual(
      [...copyPhase.map((p) => p.done)].sort((a, b) => a - b),
    );
    expect(copyPhase.at(-1)).toMatchObject({ op: "backup", unit: "pages" });
    expect(copyPhase.at(-1)?.done).toBe(copyPhase.at(-1)?.total);
    expect(steps.at(-1)).toMatchObject({ phase: "verify", done: 1, total: 1 });
    expect(readdirSync(dirname(result.path)).filter((n) => !n.startsWith("default-"))).toEqual([]);
  });
});
