import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";

// Each of the structural gate's two refusal mechanisms (P4) alone: a test
// here fails when only that mechanism is removed, because the other one
// cannot see the holder it sets up.
const CLI = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
const GATE_HOLDER = fileURLToPath(new URL("../../fixtures/gate-holder.mjs", import.meta.url));
const OFD_HOLDER = fileURLToPath(new URL("../../fixtures/ofd-holder.mjs", import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  cleanupHomes();
});

function hearth(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A quiet store with rows and free pages (so optimize would rewrite it), and a holder started on it. */
async function heldStore(fixture: string): Promise<{ home: string; path: string; pid: number }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "gate" });
  for (let i = 0; i < 50; i++)
    await store.messages.append(s.id, { role: "user", content: `m${i}` });
  await store.close();
  const child = spawn(process.execPath, [fixture, store.path], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  expect(line.toString()).toBe("ready\n");
  return { home, path: store.path, pid: child.pid! };
}

describe("the structural gate's two refusal mechanisms, each alone (P4)", () => {
  it("the gate byte: a process holding the gate shared refuses optimize even though it presents as a reader", async () => {
    const { home, path } = await heldStore(GATE_HOLDER);
    const before = sha(path);
    const r = await hearth("--home", home, "--json", "sessions", "optimize");
    expect(r.code, r.stdout).toBe(3);
    expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_STORE_HELD");
    expect(JSON.parse(r.stderr).error.message).toContain("structural gate");
    expect(sha(path)).toBe(before);
  });

  it("the holder check: a process that is not hearth holding SQLite's lock refuses optimize, named, with the gate free", async () => {
    const { home, path, pid } = await heldStore(OFD_HOLDER);
    const before = sha(path);
    const r = await hearth("--home", home, "--json", "sessions", "optimize");
    expect(r.code, r.stdout).toBe(3);
    const error = JSON.parse(r.stderr).error;
    expect(error.code).toBe("HEARTH_STORE_HELD");
    expect(error.details.holders.map((h: { pid: number }) => h.pid)).toEqual([pid]);
    expect(sha(path)).toBe(before);
  });
});
