// The audit trail through the real CLI (docs/security.md#audit-trail): a
// prune, an export, a token and a restore are recorded with the local user
// and "cli"; `hearth audit` lists them; rows live with the data, so a backup
// keeps them and a restore brings back the backup's trail and then records
// itself.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled, pgToolsFound } from "../../helpers/pg.js";

afterEach(() => cleanupHomes());

interface Entry {
  id: number;
  at: string;
  action: string;
  outcome: string;
  actor: { kind: string; id: string; via: string; address: string | null };
  targets: string[];
  detail: Record<string, unknown> | null;
}

/** Every id the entries name, sorted. */
const targetsOf = (entries: Entry[]) => entries.flatMap((e) => e.targets).sort();

async function audit(home: string, ...args: string[]): Promise<Entry[]> {
  const r = await runCli(["--json", "audit", ...args], { home });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.json<{ entries: Entry[] }>().entries;
}

/** Sessions ended a moment ago (prunable with --older-than 0). */
async function ended(home: string, n: number): Promise<string[]> {
  const store = await openStore({ home });
  try {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const s = await store.sessions.create({ title: `t${i}` });
      await store.messages.append(s.id, { role: "user", content: `m${i}` });
      await store.sessions.end(s.id, "user");
      ids.push(s.id);
    }
    await new Promise((r) => setTimeout(r, 5));
    return ids;
  } finally {
    await store.close();
  }
}

async function sessionIds(home: string): Promise<string[]> {
  const store = await openStore({ home, role: "reader" });
  try {
    return (await store.sessions.list({ includeArchived: true })).items.map((s) => s.id).sort();
  } finally {
    await store.close();
  }
}

async function backupAndRestore(home: string, ...restoreArgs: string[]) {
  const [a, b] = await ended(home, 2);
  const pruned = await runCli(["sessions", "prune", "--older-than", "0", "--yes"], { home });
  expect(pruned.code).toBe(0);
  const c = await ended(home, 1);
  const backup = await runCli(["--json", "backup"], { home });
  expect(backup.code).toBe(0);
  const file = backup.json<{ path: string }>().path;
  // After the backup: an export, then a prune the restore will undo.
  const out = join(home, "..", "out.jsonl");
  expect((await runCli(["sessions", "export", c[0]!, "-o", out], { home })).code).toBe(0);
  expect((await runCli(["sessions", "prune", "--older-than", "0", "--yes"], { home })).code).toBe(
    0,
  );
  // One prune row per lineage: two by the first prune (a, b), one by the second (c).
  expect((await audit(home)).map((e) => e.action)).toEqual([
    "session.prune",
    "export",
    "session.prune",
    "session.prune",
  ]);
  const restored = await runCli(["restore", file, "--yes", ...restoreArgs], { home });
  expect(restored.stderr).toBe("");
  expect(restored.code).toBe(0);
  return { a: a!, b: b!, c: c[0]!, file };
}

describe("hearth audit", () => {
  it("records a CLI prune, export and token with the local user via cli, and lists them", async () => {
    const home = tempHome();
    const [a, b] = await ended(home, 2);
    expect((await runCli(["sessions", "prune", "--older-than", "0", "--yes"], { home })).code).toBe(
      0,
    );
    const created = await runCli(["--json", "token", "create", "--label", "phone"], { home });
    const family = created.json<{ familyId: string }>().familyId;
    expect((await runCli(["token", "revoke", family], { home })).code).toBe(0);
    const entries = await audit(home);
    expect(entries.map((e) => e.action)).toEqual([
      "token.revoke",
      "token.create",
      "session.prune",
      "session.prune",
    ]);
    for (const e of entries) {
      expect(e.actor).toEqual({
        kind: "local",
        id: expect.stringMatching(new RegExp(`^${process.getuid!()}:`)),
        via: "cli",
        address: null,
      });
      expect(Date.parse(e.at)).toBeGreaterThan(0);
    }
    expect(targetsOf(entries.slice(2))).toEqual([a, b].sort());
    expect(entries[1]).toMatchObject({ targets: [family], detail: { label: "phone" } });
    expect((await audit(home, "--limit", "1")).map((e) => e.action)).toEqual(["token.revoke"]);
    expect(await audit(home, "--since", "2999-01-01T00:00:00Z")).toEqual([]);
    expect((await audit(home, "--since", "10m")).length).toBe(4);
    const text = await runCli(["audit"], { home });
    expect(text.stdout).toMatch(/ ok +token\.revoke +local:\d+:.* via cli/);
    const bad = await runCli(["audit", "--since", "yesterday"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since");
  });

  it("SQLite: audit rows survive a session prune and a backup + restore; restore appends its row", async () => {
    const home = tempHome();
    const { a, b, c, file } = await backupAndRestore(home);
    expect(await sessionIds(home)).toEqual([c]);
    const entries = await audit(home);
    // The backup's trail (the first prune), then the restore itself.
    expect(entries.map((e) => [e.action, e.outcome])).toEqual([
      ["store.restore", "ok"],
      ["session.prune", "ok"],
      ["session.prune", "ok"],
    ]);
    expect(entries[0]!.detail).toEqual({ from: file });
    expect(targetsOf(entries.slice(1))).toEqual([a, b].sort());
  });

  it("a worker's sweep (a scheduled prune, delete-empty) is recorded via scheduler", async () => {
    const home = tempHome();
    const [a] = await ended(home, 1);
    const run = await runCli(["--json", "worker", "run", "prune", "--older-than", "0"], { home });
    expect(run.code, run.stderr).toBe(0);
    const [row] = await audit(home);
    expect(row).toMatchObject({
      action: "session.prune",
      targets: [a],
      actor: { kind: "local", via: "scheduler", address: null },
    });
  });

  it("a refused restore records nothing: a refusal changes nothing, the trail included", async () => {
    const home = tempHome();
    await ended(home, 1);
    const r = await runCli(["restore", join(home, "no-such.db"), "--yes"], { home });
    expect(r.code).not.toBe(0);
    expect(await audit(home)).toEqual([]);
  });

  it.skipIf(!pgEnabled || !pgToolsFound)(
    "PostgreSQL: audit rows survive a backup + restore; restore appends its row",
    async () => {
      const home = tempHome();
      writeConfig(home, { store: { url: await freshPgDatabase() } });
      // --force: the database holds tables (its content goes to backups/forensic/ first).
      const { a, b, c } = await backupAndRestore(home, "--force");
      expect(await sessionIds(home)).toEqual([c]);
      const entries = await audit(home);
      expect(entries.map((e) => e.action)).toEqual([
        "store.restore",
        "session.prune",
        "session.prune",
      ]);
      expect(targetsOf(entries.slice(1))).toEqual([a, b].sort());
    },
  );
});
