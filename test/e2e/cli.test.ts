import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION, openStore } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { tempHome } from "../helpers/home.js";

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

describe("hearth CLI", () => {
  it("doctor reports a healthy store with exit 0, as text and JSON", async () => {
    const { home } = await seededHome();
    const text = await runCli(["doctor"], { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("quick_check: ok");
    expect(text.stdout).toContain("synchronous: configured full");
    expect(text.stdout).toContain("journal mode: configured wal, the file is in wal mode");
    const json = await runCli(["--json", "doctor"], { home });
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
    const r = await runCli(["--json", "doctor"], { home });
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout).findings).toContainEqual(
      expect.objectContaining({ code: "file_mode", severity: "warning" }),
    );
  });

  it("doctor on a home without a store exits 4 and creates nothing", async () => {
    const home = tempHome();
    const r = await runCli(["doctor"], { home });
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
    const r = await runCli(["--json", "sessions", "list"], { home });
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stderr);
    expect(error.code).toBe("HEARTH_CONFIG_INVALID");
    expect(error.message).toContain('did you mean "synchronous"');
  });

  it("usage errors exit 2", async () => {
    expect((await runCli(["no-such-command"])).code).toBe(2);
    expect((await runCli(["sessions", "list", "--no-such-flag"])).code).toBe(2);
    expect((await runCli(["--profile", "../etc", "sessions", "list"])).code).toBe(2);
  });

  it("sessions list, show, search and export read the store", async () => {
    const { home, id } = await seededHome();
    const list = (await runCli(["--json", "sessions", "list"], { home })).json();
    expect(list.items.map((s: { id: string }) => s.id)).toEqual([id]);
    const show = (await runCli(["--json", "sessions", "show", id, "--history"], { home })).json();
    expect(show.messages.map((m: { active: boolean }) => m.active)).toEqual([true, false]);
    const hits = (await runCli(["--json", "sessions", "search", "(for", "two"], { home })).json();
    expect(hits).toHaveLength(1);
    const out = join(home, "export.jsonl");
    expect((await runCli(["sessions", "export", "-o", out], { home })).code).toBe(0);
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { type: string }) => l.type)).toEqual(["session", "message", "message"]);
    expect((await runCli(["sessions", "show", "nope"], { home })).code).toBe(1);
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
    const r = await runCli(["restore", "/nonexistent.db"], {
      home,
      env: { HEARTH_PROFILE: "work" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `replace the work store (${join(home, "profiles", "work", "state.db")})`,
    );
  });
});
