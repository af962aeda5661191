import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { tempHome } from "../helpers/home.js";
import { snapshot } from "../helpers/snapshot.js";

// Fuzzed command lines (issue 14, abuse half): fast-check builds argv from
// hearth's commands and options mixed with hostile values (huge numbers,
// control characters, bad profile names, paths that do not exist, option
// look-alikes). Every run ends with a documented exit code (0 ok, 1 error,
// 2 usage, 3 refused, 4 doctor found problems), never prints a stack
// trace, and a run that did not succeed changed nothing in the home. The
// commands drawn only read or are dry runs, so a run that succeeded
// changed nothing either, but for an export: it records itself in the
// audit trail. Commands that would wait on a terminal or run forever are
// not drawn.

const COMMANDS = [
  ["doctor"],
  ["ps"],
  ["sessions", "list"],
  ["sessions", "show"],
  ["sessions", "search"],
  ["sessions", "export"],
  ["sessions", "prune", "--dry-run"],
  ["sessions", "optimize", "--dry-run"],
  ["sessions", "repair", "--dry-run"],
  ["sessions", "delete-empty", "--dry-run"],
  ["backup", "--dry-run"],
  ["restore", "--dry-run"],
  ["cron", "list"],
  ["cron", "runs"],
  ["token", "list"],
  ["audit"],
  ["import", "hermes", "--dry-run"],
  ["import", "openclaw", "--dry-run"],
  ["migrate", "--dry-run", "--to"],
];
const hostile = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    "-1",
    "0",
    "1e309",
    "99999999999999999999",
    "NaN",
    "--",
    "-",
    "--json",
    "--profile",
    "--home",
    "--limit",
    "--older-than",
    "--keep",
    "--format",
    "../../etc/passwd",
    "/nonexistent/file.db",
    "\u001b[31mred",
    "\u202e",
    "A".repeat(5000),
    "UPPER",
    "a/b",
  ),
);

describe("fuzzed CLI arguments", () => {
  it("exit with a documented code, print no stack trace, and change nothing when they fail", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const s = await store.sessions.create({ title: "kept" });
    await store.messages.append(s.id, { role: "user", content: "hello" });
    await store.close();
    // A command that reads creates SQLite's -wal and -shm and one that writes
    // and succeeds removes them when it closes last, so which of the two a
    // refusal meets depends on the command drawn before it: an empty log and
    // its index are compared as absent (they hold no byte of the database).
    const view = () => snapshot(home, { ignore: ["run"], idleSidecars: true });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...COMMANDS),
        fc.array(hostile, { maxLength: 4 }),
        fc.option(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("work", "..", "")), {
          nil: undefined,
        }),
        async (command, args, profile) => {
          const before = view();
          const argv = [
            ...(profile === undefined ? [] : ["--profile", profile]),
            ...command,
            ...args,
          ];
          const r = await runCli(argv, { home });
          const what = `hearth ${JSON.stringify(argv)} -> ${r.code}\n${r.stderr.slice(0, 600)}`;
          expect([0, 1, 2, 3, 4], what).toContain(r.code);
          expect(r.stderr + r.stdout, what).not.toMatch(/\n\s+at .*[(:]\d+|node:internal/);
          const audited = command[0] === "sessions" && command[1] === "export";
          if (r.code !== 0 || !audited) expect(view(), what).toEqual(before);
        },
      ),
      {
        numRuns: 12,
        // What clean-clone CI runs, and 300-run copies of this test, met:
        // - a writer that succeeds (and removes the sidecars), then a reader
        //   that refuses (and creates them);
        // - a dry run aimed at a profile with no store (it created one);
        // - an export that left its audit row in the log (its reader closed
        //   last, and a reader cannot checkpoint), then a dry run whose
        //   writer, closing last, checkpointed that row into state.db.
        examples: [
          [["sessions", "prune", "--dry-run"], [], undefined],
          [["sessions", "show"], ["-1"], undefined],
          [["sessions", "delete-empty", "--dry-run"], [], "work"],
          [["sessions", "export"], [], undefined],
          [["sessions", "prune", "--dry-run"], [], undefined],
        ],
      },
    );
  }, 120_000);
});
