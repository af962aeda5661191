import { execFileSync } from "node:child_process";
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isHearthError, openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { snapshot } from "../../helpers/snapshot.js";
import { startWorker } from "../../helpers/worker.js";

// Hostile paths as property tests (issue 14, abuse half): fast-check
// plants a symlink, a hard link, a FIFO, a socket, a directory, a
// truncated or foreign or newer file at the database or a sidecar path,
// before the first open and while a writer runs. Every open is refused
// with a stable HEARTH_* code, changes nothing on disk (before/after
// snapshots of the home and of what the plant points at), and the CLI says
// so without a stack trace.

type Plant =
  | "symlink-to-store"
  | "dangling-symlink"
  | "symlink-to-dev-null"
  | "hardlink"
  | "fifo"
  | "socket"
  | "directory"
  | "truncated"
  | "garbage"
  | "foreign-sqlite"
  | "newer-hearth";

/** A hearth store with a few rows, closed (no sidecars left). */
async function seededStore(home: string): Promise<void> {
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "kept" });
  for (let i = 0; i < 30; i++)
    await store.messages.append(s.id, { role: "user", content: `row ${i} ${"x".repeat(200)}` });
  await store.close();
}

/** Plant `kind` at `path`; `elsewhere` is a directory outside the home for targets. */
function plant(kind: Plant, path: string, elsewhere: string, truncateTo: number): void {
  switch (kind) {
    case "symlink-to-store":
      symlinkSync(join(elsewhere, "real.db"), path);
      return;
    case "dangling-symlink":
      symlinkSync(join(elsewhere, "nothing-here"), path);
      return;
    case "symlink-to-dev-null":
      symlinkSync("/dev/null", path);
      return;
    case "hardlink":
      linkSync(join(elsewhere, "real.db"), path);
      return;
    case "fifo":
      execFileSync("mkfifo", [path]);
      return;
    case "socket":
      execFileSync("python3", [
        "-c",
        "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])",
        path,
      ]);
      return;
    case "directory":
      mkdirSync(path);
      return;
    case "truncated": {
      writeFileSync(path, readFileSync(join(elsewhere, "real.db")));
      truncateSync(path, truncateTo);
      return;
    }
    case "garbage":
      writeFileSync(path, Buffer.alloc(truncateTo, 0x41));
      return;
    case "foreign-sqlite": {
      const db = new Database(path);
      db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
      db.close();
      return;
    }
    case "newer-hearth": {
      writeFileSync(path, readFileSync(join(elsewhere, "real.db")));
      const db = new Database(path);
      db.pragma(`user_version = ${Number(db.pragma("user_version", { simple: true })) + 1}`);
      db.close();
      return;
    }
  }
}

/** What a plant at the database path (no store there before) must be refused with. */
const AT_DATABASE: Record<Plant, string[]> = {
  "symlink-to-store": ["HEARTH_PATH_SYMLINK"],
  "dangling-symlink": ["HEARTH_PATH_SYMLINK"],
  "symlink-to-dev-null": ["HEARTH_PATH_SYMLINK"],
  hardlink: ["HEARTH_PATH_HARDLINK"],
  fifo: ["HEARTH_PATH_NOT_REGULAR"],
  socket: ["HEARTH_PATH_NOT_REGULAR"],
  directory: ["HEARTH_PATH_NOT_REGULAR"],
  truncated: ["HEARTH_NOT_SQLITE", "HEARTH_SQLITE", "HEARTH_FOREIGN_DATABASE"],
  garbage: ["HEARTH_NOT_SQLITE"],
  "foreign-sqlite": ["HEARTH_FOREIGN_DATABASE"],
  "newer-hearth": ["HEARTH_SCHEMA_TOO_NEW"],
};
/** Plants that make sense at a sidecar of a valid store (a regular file there is SQLite's to judge). */
const AT_SIDECAR: Partial<Record<Plant, string[]>> = {
  "symlink-to-store": ["HEARTH_PATH_SYMLINK"],
  "dangling-symlink": ["HEARTH_PATH_SYMLINK"],
  "symlink-to-dev-null": ["HEARTH_PATH_SYMLINK"],
  fifo: ["HEARTH_PATH_NOT_REGULAR"],
  socket: ["HEARTH_PATH_NOT_REGULAR"],
  directory: ["HEARTH_PATH_NOT_REGULAR"],
};

const STACK = /\n\s+at |node:internal|\.ts:\d+|\.js:\d+/;

async function expectRefusedEverywhere(home: string, allowed: string[], viaCli: boolean) {
  const before = snapshot(home);
  for (const role of ["writer", "reader"] as const) {
    let code = "opened";
    try {
      const store = await openStore({ home, role });
      await store.close();
    } catch (err) {
      code = isHearthError(err) ? err.code : `not a HearthError: ${String(err)}`;
    }
    // A reader may refuse a store that is not there yet (nothing to read) before judging the path.
    expect([...allowed, ...(role === "reader" ? ["HEARTH_STORE_NOT_FOUND"] : [])]).toContain(code);
    expect(snapshot(home)).toEqual(before);
  }
  if (!viaCli) return;
  for (const args of [
    ["sessions", "list"],
    ["--json", "doctor"],
  ]) {
    const r = await runCli(args, { home });
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).not.toBe(0);
    expect(r.stderr + r.stdout).not.toMatch(STACK);
    // A command says what refused it; doctor reports it as findings (exit 4) instead.
    if (args[1] === "doctor") expect([1, 4]).toContain(r.code);
    else expect(r.stderr + r.stdout).toMatch(/HEARTH_[A-Z_]+|refus|not a regular|symlink/);
    expect(snapshot(home)).toEqual(before);
  }
}

describe("hostile paths, planted by fast-check, are refused and left as they were (F1)", () => {
  it("at the database path or a sidecar, before the first open", async () => {
    const elsewhere = tempHome();
    await seededStore(elsewhere);
    const real = join(elsewhere, "state.db");
    writeFileSync(join(elsewhere, "real.db"), readFileSync(real));
    const size = lstatSync(real).size;
    let cliRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Plant>(...(Object.keys(AT_DATABASE) as Plant[])),
        fc.constantFrom("", "-wal", "-shm", "-journal"),
        fc.integer({ min: 1, max: size - 1 }),
        fc.boolean(),
        async (kind, suffix, truncateTo, cli) => {
          const allowed = suffix === "" ? AT_DATABASE[kind] : AT_SIDECAR[kind];
          fc.pre(allowed !== undefined);
          const home = tempHome();
          mkdirSync(home, { recursive: true, mode: 0o700 });
          // A sidecar plant sits next to a valid closed store.
          if (suffix !== "") writeFileSync(join(home, "state.db"), readFileSync(real));
          plant(kind, join(home, `state.db${suffix}`), elsewhere, truncateTo);
          const useCli = cli && cliRuns < 3;
          if (useCli) cliRuns++;
          await expectRefusedEverywhere(home, allowed as string[], useCli);
        },
      ),
      { numRuns: 40 },
    );
    // What the plants pointed at was never touched.
    expect(readFileSync(join(elsewhere, "real.db"))).toEqual(readFileSync(real));
  }, 120_000);

  it("at the -journal path while a writer runs: a new opener is refused, the writer keeps writing", async () => {
    const elsewhere = tempHome();
    await seededStore(elsewhere);
    writeFileSync(join(elsewhere, "real.db"), readFileSync(join(elsewhere, "state.db")));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Plant>(...(Object.keys(AT_SIDECAR) as Plant[])),
        async (kind) => {
          const home = tempHome();
          await seededStore(home);
          const writer = await startWorker();
          try {
            await writer.call("open", { home });
            const s = (await writer.call("create", { title: "live" })) as { id: string };
            plant(kind, join(home, "state.db-journal"), elsewhere, 1);
            const allowed = AT_SIDECAR[kind] as string[];
            let code = "opened";
            try {
              const store = await openStore({ home });
              await store.close();
            } catch (err) {
              code = isHearthError(err) ? err.code : String(err);
            }
            expect(allowed).toContain(code);
            // The live writer was not disturbed by the plant or by the refused open.
            await writer.call("append", { sessionId: s.id, content: "after", clientId: "a1" });
          } finally {
            await writer.kill("SIGTERM");
          }
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);

  it("on a read-only filesystem: HEARTH_READ_ONLY_FS for a writer and a reader, never a raw EROFS", async (ctx) => {
    const mnt = tempHome();
    mkdirSync(mnt, { recursive: true });
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", mnt], {
        stdio: "ignore",
      });
    } catch {
      ctx.skip(); // mounting needs root (CAP_SYS_ADMIN)
    }
    try {
      const home = join(mnt, "home");
      const empty = join(mnt, "empty");
      mkdirSync(empty, { mode: 0o700 });
      await seededStore(home);
      execFileSync("mount", ["-o", "remount,ro", mnt]);
      const before = snapshot(mnt);
      for (const [where, role, code] of [
        [home, "writer", "HEARTH_READ_ONLY_FS"],
        [home, "reader", "HEARTH_READ_ONLY_FS"],
        [empty, "writer", "HEARTH_READ_ONLY_FS"],
        [empty, "reader", "HEARTH_STORE_NOT_FOUND"],
      ] as const) {
        let got = "opened";
        try {
          await (await openStore({ home: where, role })).close();
        } catch (err) {
          got = isHearthError(err) ? err.code : `not a HearthError: ${String(err)}`;
        }
        expect({ where, role, got }).toEqual({ where, role, got: code });
      }
      const r = await runCli(["--json", "sessions", "list"], { home });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("HEARTH_READ_ONLY_FS");
      expect(r.stderr).not.toMatch(STACK);
      expect(snapshot(mnt)).toEqual(before);
    } finally {
      execFileSync("umount", ["-l", mnt], { stdio: "ignore" });
    }
  }, 60_000);
});
