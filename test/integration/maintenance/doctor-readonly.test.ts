import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import type { DoctorReport } from "../../../src/ops/doctor.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

async function doctor(
  home: string,
  ...args: string[]
): Promise<DoctorReport & { code: number | null }> {
  const r = await runCli([...args, "--json", "doctor"], { home });
  expect(r.stderr).toBe("");
  return { ...(JSON.parse(r.stdout) as DoctorReport), code: r.code };
}

interface Entry {
  type: "file" | "dir" | "link";
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  sha256?: string;
}

/** Every file and directory under `root` (root included), by path. */
function snapshotTree(root: string): Map<string, Entry> {
  const tree = new Map<string, Entry>();
  const visit = (path: string) => {
    const st = lstatSync(path, { bigint: true });
    const type = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : "file";
    const entry: Entry = { type, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs };
    if (path.endsWith("state.db") || path.endsWith("state.db-wal"))
      entry.sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    tree.set(path, entry);
    if (type === "dir") for (const name of readdirSync(path).sort()) visit(join(path, name));
  };
  visit(root);
  return tree;
}

async function seed(home: string): Promise<string> {
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "doctor me" });
  await store.messages.appendBatch(s.id, [
    { role: "user", content: "one" },
    { role: "assistant", content: "two" },
  ]);
  await store.close();
  return s.id;
}

describe("hearth doctor changes nothing (M1)", () => {
  it("on a quiet store: every file and directory is identical afterwards, and no sidecar appears", async () => {
    const home = tempHome();
    await seed(home);
    const db = join(home, "state.db");
    // Quiet: every hearth process closed it, so SQLite removed -wal and -shm.
    expect(existsSync(`${db}-wal`)).toBe(false);
    expect(existsSync(`${db}-shm`)).toBe(false);
    const before = snapshotTree(home);

    const text = await runCli(["doctor"], { home });
    const report = await doctor(home);

    expect(snapshotTree(home)).toEqual(before);
    expect(existsSync(`${db}-wal`)).toBe(false);
    expect(existsSync(`${db}-shm`)).toBe(false);
    expect(text.code).toBe(0);
    // It did read the content: from an in-memory copy of the database file.
    expect(report).toMatchObject({ snapshot: "copy", counts: { sessions: 1, messages: 2 } });
  });

  it("on a live store: the database and -wal are untouched, no file is created or removed", async () => {
    const home = tempHome();
    const sessionId = await seed(home);
    const db = join(home, "state.db");
    const writer = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    await writer.call("open", { home });
    await writer.call("appendLoop", { sessionId, count: 20, prefix: "live" });
    expect(lstatSync(`${db}-wal`).size).toBeGreaterThan(0);
    // The writer is idle from here on: nothing but doctor could change a file.
    const before = snapshotTree(home);

    const report = await doctor(home);
    expect(report.snapshot).toBe("live");
    expect(report.counts).toMatchObject({ sessions: 1, messages: 22 });
    expect(report.holders).toEqual([
      expect.objectContaining({ pid: writer.pid, kind: "worker", roles: ["reader", "writer"] }),
    ]);
    // Exit 0: no warning. When one comes, its finding is in the failure message.
    const cli = await runCli(["doctor"], { home });
    expect(cli.code, `${cli.stdout}${cli.stderr}`).toBe(0);

    const after = snapshotTree(home);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [path, entry] of before) {
      if (path === `${db}-shm`) {
        // A read-only connection takes a read mark in the -shm's shared memory, as every
        // reader does: its bytes and mtime may change. It is the same file, same size.
        expect(after.get(path)).toMatchObject({ ino: entry.ino, size: entry.size });
      } else {
        // The database and -wal (content, inode, size, mtime), the markers, the directories.
        expect(after.get(path), path).toEqual(entry);
      }
    }
    expect(after.get(db)?.sha256).toBeDefined();
    expect(after.get(`${db}-wal`)?.sha256).toBeDefined();
  });
});

describe("hearth doctor findings and exit codes", () => {
  it("exits 0 with only ok and info findings, 4 with a warning (a database others can read)", async () => {
    const home = tempHome();
    await seed(home);
    const info = await doctor(home);
    // No backup yet is informational.
    expect(info.status).toBe("info");
    expect(info.findings).toContainEqual(
      expect.objectContaining({ code: "backups", severity: "info" }),
    );
    expect(info.code).toBe(0);

    expect((await runCli(["backup"], { home })).code).toBe(0);
    const ok = await doctor(home);
    expect(ok.findings.filter((f) => f.severity !== "ok")).toEqual([]);
    expect(ok.status).toBe("ok");
    expect(ok.code).toBe(0);

    chmodSync(join(home, "state.db"), 0o644);
    const warned = await doctor(home);
    expect(warned.findings).toContainEqual(
      expect.objectContaining({ code: "file_mode", severity: "warning" }),
    );
    expect(warned.status).toBe("warning");
    expect(warned.code).toBe(4);
    expect((await runCli(["doctor"], { home })).code).toBe(4);
  });

  it("says store_missing for a home without a store, and creates nothing", async () => {
    const home = tempHome();
    const report = await doctor(home);
    expect(report.code).toBe(4);
    expect(report.findings).toEqual([
      expect.objectContaining({ code: "store_missing", severity: "warning" }),
    ]);
    expect(existsSync(home)).toBe(false);
  });

  it("reports ghost_generation for a worker that holds a deleted -wal and -shm", async () => {
    const home = tempHome();
    const sessionId = await seed(home);
    const db = join(home, "state.db");
    const writer = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    await writer.call("open", { home });
    await writer.call("append", { sessionId, content: "three", clientId: "c3" });
    const clean = await doctor(home);
    expect(clean.findings.map((f) => f.code)).not.toContain("ghost_generation");

    rmSync(`${db}-wal`);
    rmSync(`${db}-shm`);
    const report = await doctor(home);
    expect(report.code).toBe(4);
    const ghosts = report.findings.filter((f) => f.code === "ghost_generation");
    expect(ghosts).toEqual([expect.objectContaining({ severity: "error" })]);
    expect(ghosts[0]!.message).toContain(`pid ${writer.pid}`);
    expect(ghosts[0]!.message).toContain(`${db}-wal`);
    // Doctor recreated neither sidecar.
    expect(existsSync(`${db}-wal`)).toBe(false);
    expect(existsSync(`${db}-shm`)).toBe(false);
  });

  it("reports profile_routing as an error when profiles/b is a symlink to profiles/a", async () => {
    const home = tempHome();
    for (const profile of ["a", "b"]) {
      const store = await openStore({ home, profile });
      await store.sessions.create({ title: `in ${profile}` });
      await store.close();
    }
    const routing = (r: DoctorReport) => r.findings.find((f) => f.code === "profile_routing");
    // Two real profiles: each its own database.
    expect(routing(await doctor(home, "--profile", "a"))?.severity).toBe("ok");

    const dirA = join(home, "profiles", "a");
    const dirB = join(home, "profiles", "b");
    renameSync(dirB, join(home, "b-aside"));
    symlinkSync(dirA, dirB);
    for (const profile of ["a", "b"]) {
      const report = await doctor(home, "--profile", profile);
      expect(report.code).toBe(4);
      expect(routing(report)).toMatchObject({ severity: "error" });
      expect(routing(report)?.message).toContain(
        `(${join(home, "profiles", profile, "state.db")})`,
      );
      expect(routing(report)?.message).toMatch(/profiles (a, b|b, a) resolve to one database/);
    }
  });
});
