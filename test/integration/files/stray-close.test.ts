import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

/** Another process (this test process) opens and closes the database, as any tool might. */
function openAndCloseFromAnotherProcess(path: string): void {
  const db = new Database(path);
  db.prepare("SELECT count(*) FROM sqlite_schema").get();
  db.close();
}

const inode = (path: string) => statSync(path).ino;

describe("a stray close() inside a writer process (F2)", () => {
  it("control: without hearth, another process's close deletes the live -wal and -shm", async () => {
    const dir = tempHome();
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "raw.db");
    const holder = spawnNode([
      fileURLToPath(new URL("../../fixtures/raw-holder.mjs", import.meta.url)),
      path,
    ]);
    await holder.line((l) => l === "ready", "ready");
    expect(existsSync(`${path}-wal`)).toBe(true);
    openAndCloseFromAnotherProcess(path);
    // This is the field failure: the holder still writes to files nobody else can see.
    expect(existsSync(`${path}-wal`) && existsSync(`${path}-shm`)).toBe(false);
  });

  it("with hearth, the holder keeps its -wal/-shm and its writes stay visible", async () => {
    const home = tempHome();
    const writer = await startWorker();
    const { path } = await writer.call<{ path: string }>("open", { home });
    const session = await writer.call<{ id: string }>("create", { title: "stray" });
    await writer.call("append", {
      sessionId: session.id,
      content: "before the stray close",
      clientId: "a",
    });
    const before = { wal: inode(`${path}-wal`), shm: inode(`${path}-shm`) };

    await writer.call("stray", { paths: [path, `${path}-wal`, `${path}-shm`] });
    openAndCloseFromAnotherProcess(path);

    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(existsSync(`${path}-shm`)).toBe(true);
    expect({ wal: inode(`${path}-wal`), shm: inode(`${path}-shm`) }).toEqual(before);
    await writer.call("append", {
      sessionId: session.id,
      content: "after the stray close",
      clientId: "b",
    });

    // A new process sees both writes: the holder did not drift onto a ghost generation.
    const reader = await openStore({ home, role: "reader" });
    const messages = await reader.messages.load(session.id);
    expect(messages.map((m) => m.clientId)).toEqual(["a", "b"]);
    expect(await reader.quickCheck()).toEqual({ ok: true, problems: [] });
    await reader.close();
  });
});
