import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type Message, openStore, type Session } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";

const DAY = 24 * 60 * 60 * 1000;

/** Every session id in the store, sorted (through a reader, closed again). */
async function ids(home: string): Promise<string[]> {
  const store = await openStore({ home, role: "reader" });
  try {
    const page = await store.sessions.list({
      limit: 500,
      includeArchived: true,
      includeHidden: true,
    });
    return page.items.map((s) => s.id).sort();
  } finally {
    await store.close();
  }
}

/**
 * Sessions for prune, by name. "old" ones are ended, then made 100 days old by
 * opening the database file directly with better-sqlite3 after every hearth
 * process (this one included) closed it: hearth has no API to end a session in
 * the past, and nothing else holds the file then.
 */
async function pruneFixture(home: string): Promise<Record<string, string>> {
  const store = await openStore({ home });
  const s: Record<string, string> = {};
  const make = async (name: string, parentId?: string) => {
    const session = await store.sessions.create({ title: name, parentId: parentId ?? null });
    await store.messages.append(session.id, { role: "user", content: `in ${name}` });
    s[name] = session.id;
    return session.id;
  };
  for (const name of ["old", "recent", "unended", "pinned", "archived", "lineageA", "lineageB"])
    await make(name);
  await make("childA", s.lineageA); // both members old: the lineage goes whole
  await make("childB", s.lineageB); // one member recent: the lineage stays whole
  await store.sessions.setPinned(s.pinned!, true);
  await store.sessions.setArchived(s.archived!, true);
  for (const name of Object.keys(s).filter((n) => n !== "unended"))
    await store.sessions.end(s[name]!, "user");
  await store.close();

  const old = ["old", "pinned", "archived", "lineageA", "childA", "lineageB"].map((n) => s[n]!);
  const db = new Database(store.path, { fileMustExist: true });
  const update = db.prepare("UPDATE sessions SET ended_at = ?, last_activity_at = ? WHERE id = ?");
  const then = Date.now() - 100 * DAY;
  for (const id of old) expect(update.run(then, then, id).changes).toBe(1);
  // The unended one is old too: only its missing end keeps it.
  db.prepare("UPDATE sessions SET last_activity_at = ? WHERE id = ?").run(then, s.unended!);
  db.close();
  return s;
}

describe("hearth sessions prune", () => {
  it("deletes old ended sessions, keeps recent, unended, pinned and archived ones, lineages whole", async () => {
    const home = tempHome();
    const s = await pruneFixture(home);
    const all = Object.values(s).sort();
    expect(await ids(home)).toEqual(all);

    const prune = (...args: string[]) =>
      runCli(["sessions", "prune", "--older-than", "30", ...args], { home });

    const unasked = await prune("--json");
    expect(unasked.code).toBe(2);
    expect(JSON.parse(unasked.stderr).error.code).toBe("HEARTH_USAGE");
    expect(await ids(home)).toEqual(all);

    const dry = await prune("--json", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    const expected = [s.old!, s.lineageA!, s.childA!].sort();
    // keptLineages counts lineages with a qualifying member kept for another one: lineageB.
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, lineages: 2, keptLineages: 1 });
    expect(JSON.parse(dry.stdout).sessions.sort()).toEqual(expected);
    const dryText = await prune("--dry-run");
    expect(dryText.stdout).toContain("would delete 3 session(s) in 2 lineage(s)");
    expect(await ids(home)).toEqual(all);

    const r = await prune("--json", "--yes");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).sessions.sort()).toEqual(expected);
    const left = all.filter((id) => !expected.includes(id));
    expect(await ids(home)).toEqual(left);

    const pinned = await prune("--json", "--yes", "--include-pinned");
    expect(JSON.parse(pinned.stdout).sessions).toEqual([s.pinned]);
    expect(await ids(home)).toEqual(left.filter((id) => id !== s.pinned));

    const archived = await prune("--json", "--yes", "--include-archived");
    expect(JSON.parse(archived.stdout).sessions).toEqual([s.archived]);
    // Recent, unended, and the lineage with one recent member (both of its sessions).
    expect(await ids(home)).toEqual([s.recent!, s.unended!, s.lineageB!, s.childB!].sort());
  });
});

describe("hearth sessions delete-empty", () => {
  it("deletes sessions without any message row; all-history and pinned sessions stay", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const empty = await store.sessions.create({ title: "empty" });
    const pinned = await store.sessions.create({ title: "pinned empty" });
    await store.sessions.setPinned(pinned.id, true);
    const rewound = await store.sessions.create({ title: "rewound" });
    await store.messages.appendBatch(rewound.id, [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]);
    expect(await store.messages.rewind(rewound.id, -1)).toBe(2);
    expect(await store.messages.load(rewound.id)).toEqual([]);
    await store.close();
    const all = [empty.id, pinned.id, rewound.id].sort();

    const dry = await runCli(["--json", "sessions", "delete-empty", "--dry-run"], { home });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, sessions: [empty.id] });
    expect(await ids(home)).toEqual(all);

    const r = await runCli(["--json", "sessions", "delete-empty"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ dryRun: false, sessions: [empty.id] });
    expect(await ids(home)).toEqual([pinned.id, rewound.id].sort());
  });
});

type Line = { type: "session"; session: Session } | { type: "message"; message: Message };

/** Two sessions with messages; the first has rewound history. Every writer closed. */
async function exportFixture(
  home: string,
): Promise<Record<string, { session: Session; messages: Message[] }>> {
  const store = await openStore({ home });
  const a = await store.sessions.create({ title: "with history" });
  await store.messages.appendBatch(a.id, [
    { role: "user", content: "question" },
    { role: "assistant", content: { text: "structured" } },
    { role: "user", content: "rewound away" },
  ]);
  await store.messages.rewind(a.id, 1);
  await store.messages.append(a.id, { role: "user", content: "better question" });
  const b = await store.sessions.create({ title: "plain" });
  await store.messages.append(b.id, { role: "user", content: "hello" });
  const stored: Record<string, { session: Session; messages: Message[] }> = {};
  for (const id of [a.id, b.id]) {
    stored[id] = {
      session: await store.sessions.require(id),
      messages: await store.messages.load(id, { includeHistory: true }),
    };
  }
  await store.close();
  return stored;
}

function parseJsonl(text: string): Record<string, { session: Session; messages: Message[] }> {
  expect(text.endsWith("\n")).toBe(true);
  const out: Record<string, { session: Session; messages: Message[] }> = {};
  let current: string | undefined;
  for (const raw of text.slice(0, -1).split("\n")) {
    const line = JSON.parse(raw) as Line;
    if (line.type === "session") {
      current = line.session.id;
      out[current] = { session: line.session, messages: [] };
    } else {
      expect(line.message.sessionId).toBe(current);
      out[current!]!.messages.push(line.message);
    }
  }
  return out;
}

describe("hearth sessions export", () => {
  it("writes JSONL that parses line by line into exactly the store, history included; --format json one session", async () => {
    const home = tempHome();
    const stored = await exportFixture(home);
    const [a, b] = Object.keys(stored);
    const file = join(dirname(home), "all.jsonl");
    const r = await runCli(["sessions", "export", "-o", file], { home });
    expect(r.code, r.stderr).toBe(0);
    const exported = parseJsonl(readFileSync(file, "utf8"));
    expect(exported).toEqual(stored);
    expect(exported[a!]!.messages.map((m) => [m.ordinal, m.active])).toEqual([
      [0, true],
      [1, true],
      [2, false],
      [3, true],
    ]);
    expect(exported[a!]!.messages[2]!.content).toBe("rewound away");
    // To stdout, one session.
    const one = await runCli(["sessions", "export", b!], { home });
    expect(parseJsonl(one.stdout)).toEqual({ [b!]: stored[b!] });
    // -o never overwrites.
    expect((await runCli(["sessions", "export", "-o", file], { home })).code).toBe(1);

    const json = await runCli(["sessions", "export", "--format", "json", a!], { home });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(stored[a!]);
    expect((await runCli(["sessions", "export", "--format", "json"], { home })).code).toBe(2);
  });

  it("--delete-after-export -o FILE deletes what it exported; a session changed since its fingerprint is kept", async () => {
    const home = tempHome();
    const stored = await exportFixture(home);
    const [a, b] = Object.keys(stored);
    const file = join(dirname(home), "a.jsonl");
    expect((await runCli(["sessions", "export", "--delete-after-export", a!], { home })).code).toBe(
      2,
    );
    const r = await runCli(
      ["--json", "sessions", "export", "--delete-after-export", "-o", file, a!],
      { home },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      output: file,
      exported: 1,
      deleted: [a],
      keptBecauseChanged: [],
    });
    expect(parseJsonl(readFileSync(file, "utf8"))).toEqual({ [a!]: stored[a!] });
    expect(await ids(home)).toEqual([b]);

    // Compare-and-set, through the library: a message appended after the fingerprint keeps it.
    const store = await openStore({ home });
    try {
      const fp = await store.sessions.fingerprint(b!);
      expect(fp).toBeDefined();
      await store.messages.append(b!, { role: "user", content: "arrived during the export" });
      expect(await store.sessions.deleteIfUnchanged(fp!)).toBe(false);
      expect(await store.sessions.get(b!)).not.toBeNull();
      expect(await store.messages.load(b!)).toHaveLength(2);
      const fresh = await store.sessions.fingerprint(b!);
      expect(await store.sessions.deleteIfUnchanged(fresh!)).toBe(true);
      expect(await store.sessions.get(b!)).toBeNull();
    } finally {
      await store.close();
    }
    expect(existsSync(file)).toBe(true);
  });
});
