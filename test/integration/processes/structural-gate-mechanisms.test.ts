import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";

// Each of the structural gate's two refusal mechanisms (P4) alone: a test
// here fails when only that mechanism is removed, because the other one
// cannot see the holder it sets up.
const GATE_HOLDER = fileURLToPath(new URL("../../fixtures/gate-holder.mjs", import.meta.url));
const OFD_HOLDER = fileURLToPath(new URL("../../fixtures/ofd-holder.mjs", import.meta.url));

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A quiet store with rows and free pages (so optimize would rewrite it), and a holder started on it. */
async function heldStore(fixture: string): Promise<{ home: string; path: string; pid: number }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "gate" });
  for (let i = 0; i < 50; i++)
    await store.messages.append(s.id, { role: "user", content: `m${i}` });
  await store.close();
  const child = spawnNode([fixture, store.path]);
  await child.line((l) => l === "ready");
  return { home, path: store.path, pid: child.pid };
}

describe("the structural gate's two refusal mechanisms, each alone (P4)", () => {
  it("the gate byte: a process holding the gate shared refuses optimize even though it presents as a reader", async () => {
    const { home, path } = await heldStore(GATE_HOLDER);
    const before = sha(path);
    const r = await runCli(["--json", "sessions", "optimize"], { home });
    expect(r.code, r.stdout).toBe(3);
    expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_STORE_HELD");
    expect(JSON.parse(r.stderr).error.message).toContain("structural gate");
    expect(sha(path)).toBe(before);
  });

  it("the holder check: a process that is not hearth holding SQLite's lock refuses optimize, named, with the gate free", async () => {
    const { home, path, pid } = await heldStore(OFD_HOLDER);
    const before = sha(path);
    const r = await runCli(["--json", "sessions", "optimize"], { home });
    expect(r.code, r.stdout).toBe(3);
    const error = JSON.parse(r.stderr).error;
    expect(error.code).toBe("HEARTH_STORE_HELD");
    expect(error.details.holders.map((h: { pid: number }) => h.pid)).toEqual([pid]);
    expect(sha(path)).toBe(before);
  });
});
