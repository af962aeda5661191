import { readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { backup } from "../../../src/ops/backup.js";
import type { StepProgress } from "../../../src/store/progress.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { snapshot } from "../../helpers/snapshot.js";

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

describe("--progress json", () => {
  it("streams one JSON line per step on stderr for backup and restore; stdout keeps its one result", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const s = await store.sessions.create({ title: "p" });
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 3000 }, (_, i) => ({
        role: "user" as const,
        content: `${i} ${"w".repeat(2000)}`,
      })),
    );
    await store.close();
    const lines = (stderr: string) =>
      stderr
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { progress: StepProgress }).progress);

    const b = await runCli(["--json", "--progress", "json", "backup"], { home });
    expect(b.code, b.stderr).toBe(0);
    const path = (JSON.parse(b.stdout) as { path: string }).path;
    const steps = lines(b.stderr);
    expect(steps.length).toBeGreaterThan(3);
    for (const p of steps)
      expect(Object.keys(p).sort()).toEqual(["done", "op", "phase", "total", "unit"]);
    expect(steps.map((p) => p.phase)).toEqual([
      ...steps.filter((p) => p.phase === "copy").map(() => "copy"),
      "verify",
      "verify",
    ]);
    expect(steps.at(-1)).toEqual({
      op: "backup",
      phase: "verify",
      done: 1,
      total: 1,
      unit: "steps",
    });

    const r = await runCli(["--json", "--progress", "json", "restore", path, "--yes"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ from: path, dryRun: false });
    expect(lines(r.stderr).map((p) => `${p.phase} ${p.done}/${p.total}`)).toEqual([
      "verify 0/4",
      "forensic copy 1/4",
      "copy 2/4",
      "publish 3/4",
      "done 4/4",
    ]);

    // Without --progress, --json output stays one document on each stream.
    const quiet = await runCli(["--json", "backup"], { home });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
  });
});

describe("backup and restore --dry-run", () => {
  it("reports the target and the space check, and creates nothing: not even backups/", async () => {
    const home = tempHome();
    await (await openStore({ home })).close();
    const before = snapshot(home, { ignore: ["run"], idleSidecars: true });
    const r = await runCli(["--json", "backup", "--dry-run"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ dryRun: true, removed: [] });
    expect(r.json().path).toMatch(/\/backups\/default-.*\.db$/);
    expect(snapshot(home, { ignore: ["run"], idleSidecars: true })).toEqual(before);
  });

  it("restore --dry-run into a profile that has no store yet creates nothing either", async () => {
    const home = tempHome();
    await (await openStore({ home })).close();
    const made = await runCli(["--json", "backup"], { home });
    expect(made.code, made.stderr).toBe(0);
    const before = snapshot(home, { ignore: ["run"], idleSidecars: true });
    const r = await runCli(
      ["--json", "--profile", "fresh", "restore", made.json().path, "--dry-run"],
      {
        home,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ dryRun: true });
    expect(r.json().path).toMatch(/\/profiles\/fresh\/state\.db$/);
    expect(snapshot(home, { ignore: ["run"], idleSidecars: true })).toEqual(before);
  });
});
