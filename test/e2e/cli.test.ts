import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION, openStore } from "../../src/index.js";
import { cleanupHomes, tempHome } from "../helpers/home.js";

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

function hearth(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function seededHome(): Promise<{ home: string; id: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "Trip to Lisbon" });
  await store.messages.appendBatch(s.id, [
    { role: "user", content: "book a table (for two" },
    { role: "assistant", content: "done" },
  ]);
  await store.messages.rewind(s.id, 0);
  await store.close();
  return { home, id: s.id };
}

afterEach(cleanupHomes);

describe("hearth CLI", () => {
  it("doctor reports a healthy store with exit 0, as text and JSON", async () => {
    const { home } = await seededHome();
    const text = hearth("--home", home, "doctor");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("quick_check: ok");
    expect(text.stdout).toContain("synchronous: configured full");
    expect(text.stdout).toContain("journal mode: configured wal, the file is in wal mode");
    const json = hearth("--home", home, "--json", "doctor");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    // "info": no backup exists yet, which is worth saying but not a problem (exit 0).
    expect(report).toMatchObject({
      status: "info",
      schemaVersion: LATEST_SCHEMA_VERSION,
      counts: { sessions: 1, messages: 2 },
    });
  });

  it("doctor exits 4 when it finds a problem", async () => {
    const { home } = await seededHome();
    // A database others can read is a warning.
    const { chmodSync } = await import("node:fs");
    chmodSync(join(home, "state.db"), 0o644);
    const r = hearth("--home", home, "--json", "doctor");
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout).findings).toContainEqual(
      expect.objectContaining({ code: "file_mode", severity: "warning" }),
    );
  });

  it("doctor on a home without a store exits 4 and creates nothing", () => {
    const home = tempHome();
    const r = hearth("--home", home, "doctor");
    expect(r.code).toBe(4);
    expect(r.stdout).toContain("no store at");
    expect(() => readFileSync(join(home, "state.db"))).toThrow();
  });

  it("an invalid config is an error that names the key (exit 1)", async () => {
    const { home } = await seededHome();
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ durability: { synchronus: "full" } }),
    );
    const r = hearth("--home", home, "--json", "sessions", "list");
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stderr);
    expect(error.code).toBe("HEARTH_CONFIG_INVALID");
    expect(error.message).toContain('did you mean "synchronous"');
  });

  it("usage errors exit 2", () => {
    expect(hearth("no-such-command").code).toBe(2);
    expect(hearth("sessions", "list", "--no-such-flag").code).toBe(2);
    expect(hearth("--profile", "../etc", "sessions", "list").code).toBe(2);
  });

  it("sessions list, show, search and export read the store", async () => {
    const { home, id } = await seededHome();
    const list = JSON.parse(hearth("--home", home, "--json", "sessions", "list").stdout);
    expect(list.items.map((s: { id: string }) => s.id)).toEqual([id]);
    const show = JSON.parse(
      hearth("--home", home, "--json", "sessions", "show", id, "--history").stdout,
    );
    expect(show.messages.map((m: { active: boolean }) => m.active)).toEqual([true, false]);
    const hits = JSON.parse(
      hearth("--home", home, "--json", "sessions", "search", "(for", "two").stdout,
    );
    expect(hits).toHaveLength(1);
    const out = join(home, "export.jsonl");
    expect(hearth("--home", home, "sessions", "export", "-o", out).code).toBe(0);
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { type: string }) => l.type)).toEqual(["session", "message", "message"]);
    expect(hearth("--home", home, "sessions", "show", "nope").code).toBe(1);
  });
});

describe("docs", () => {
  it("docs/errors.md documents every error code", async () => {
    const { ERROR_CODES } = await import("../../src/errors.js");
    const doc = readFileSync(
      fileURLToPath(new URL("../../docs/errors.md", import.meta.url)),
      "utf8",
    );
    const missing = Object.keys(ERROR_CODES).filter((code) => !doc.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
  it("names the profile $HEARTH_PROFILE chose, and its database, when restore asks for confirmation", async () => {
    const home = tempHome();
    const work = await openStore({ home, profile: "work" });
    await work.close();
    const r = spawnSync(process.execPath, [CLI, "--home", home, "restore", "/nonexistent.db"], {
      encoding: "utf8",
      env: { ...process.env, HEARTH_PROFILE: "work" },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `replace the work store (${join(home, "profiles", "work", "state.db")})`,
    );
  });
});
