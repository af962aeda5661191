import { once } from "node:events";
import { createWriteStream, rmSync } from "node:fs";
import type { Command } from "commander";
import { HearthError } from "../../errors.js";
import type { Store } from "../../store/api.js";
import type { Session } from "../../store/types.js";
import { type GlobalOptions, globals } from "../globals.js";
import { printJson } from "../output.js";
import { printable } from "../printable.js";
import { progress } from "../progress.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const fsyncFile = async (path: string) => (await import("../../ops/publish.js")).fsyncFile(path);
const openExclusive = async (path: string) =>
  (await import("../../files/create.js")).openExclusive(path);
const recordAct: typeof import("../../ops/audited.js").recordAct = async (...a) =>
  (await import("../../ops/audited.js")).recordAct(...a);
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);

async function open(g: GlobalOptions, role: "reader" | "writer" = "reader"): Promise<Store> {
  const options = {
    role,
    ...(g.home ? { home: g.home } : {}),
    ...(g.profile ? { profile: g.profile } : {}),
  };
  try {
    return await openStore(options);
  } catch (err) {
    // A PostgreSQL database the configuration names (store.url) is the
    // store: its first use creates hearth's schema (a writer opened once,
    // under the migration lock), so `hearth sessions list` works on a new,
    // empty database. A read never creates a SQLite file.
    if (!(err instanceof HearthError) || err.code !== "HEARTH_STORE_NOT_FOUND") throw err;
    if (!/^postgres(ql)?:/.test(err.resource ?? "")) throw err;
    await (await openStore({ ...options, role: "writer" })).close();
    return openStore(options);
  }
}

function line(s: Session): string {
  const when = new Date(s.lastActivityAt).toISOString().slice(0, 16).replace("T", " ");
  const flags = [
    s.pinned ? "pinned" : "",
    s.archived ? "archived" : "",
    s.endedAt ? "ended" : "",
  ].filter(Boolean);
  return `${s.id}  ${when}  ${String(s.messageCount).padStart(5)} msgs  ${s.title === null || s.title === undefined ? "(untitled)" : printable(s.title, { oneLine: true })}${flags.length ? `  [${flags.join(", ")}]` : ""}`;
}

export function registerSessions(program: Command): Command {
  const sessions = program.command("sessions").description("browse, export and maintain sessions");

  sessions
    .command("list")
    .description("list sessions, most recent activity first")
    .option("--limit <n>", "how many", (v) => Number.parseInt(v, 10), 50)
    .option("--all", "include archived and hidden sessions")
    .option("--cursor <cursor>", "continue from a previous page")
    .action(async (o: { limit: number; all?: boolean; cursor?: string }, command: Command) => {
      const g = globals(command);
      const store = await open(g);
      try {
        const page = await store.sessions.list({
          limit: o.limit,
          includeArchived: o.all === true,
          includeHidden: o.all === true,
          ...(o.cursor ? { cursor: o.cursor } : {}),
        });
        if (g.json) printJson(page);
        else {
          for (const s of page.items) process.stdout.write(`${line(s)}\n`);
          if (page.nextCursor)
            process.stdout.write(`more: hearth sessions list --cursor ${page.nextCursor}\n`);
        }
      } finally {
        await store.close();
      }
    });

  sessions
    .command("show <id>")
    .description("print a session's transcript")
    .option("--history", "include rewound and compacted messages")
    .action(async (id: string, o: { history?: boolean }, command: Command) => {
      const g = globals(command);
      const store = await open(g);
      try {
        const session = await store.sessions.require(id);
        const messages = await store.messages.load(id, { includeHistory: o.history === true });
        if (g.json) printJson({ session, messages });
        else {
          process.stdout.write(`${line(session)}\n\n`);
          for (const m of messages) {
            const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
            process.stdout.write(
              `[${m.ordinal}] ${m.role}${m.active ? "" : ` (${m.archivedReason})`}: ${printable(text)}\n`,
            );
          }
        }
      } finally {
        await store.close();
      }
    });

  sessions
    .command("search <text...>")
    .description("full-text search over messages")
    .option("--history", "include rewound and compacted messages")
    .option("--limit <n>", "how many hits", (v) => Number.parseInt(v, 10), 20)
    .action(async (words: string[], o: { history?: boolean; limit: number }, command: Command) => {
      const g = globals(command);
      const store = await open(g);
      try {
        const hits = await store.search(words.join(" "), {
          includeHistory: o.history === true,
          limit: o.limit,
        });
        if (g.json) printJson(hits);
        else
          for (const h of hits)
            process.stdout.write(
              `${h.sessionId} #${h.ordinal} ${h.role}: ${printable(h.snippet, { oneLine: true })}\n`,
            );
      } finally {
        await store.close();
      }
    });

  sessions
    .command("export [ids...]")
    .description(
      "stream sessions as JSONL or Markdown, or one session as JSON (all sessions when no id is given)",
    )
    .option("--format <format>", "jsonl, markdown, or json (one session)", "jsonl")
    .option("-o, --output <file>", "write to a file instead of stdout (never overwrites)")
    .option(
      "--delete-after-export",
      "then delete the exported sessions that did not change since (needs -o)",
    )
    .option(
      "--checkpoint",
      "record that the archive is exported, so compaction may proceed with gateway.checkpointRequired (needs -o)",
    )
    .action(
      async (
        ids: string[],
        o: { format: string; output?: string; deleteAfterExport?: boolean; checkpoint?: boolean },
        command: Command,
      ) => {
        const g = globals(command);
        if (o.format !== "jsonl" && o.format !== "markdown" && o.format !== "json") {
          throw new RangeError(`--format must be jsonl, markdown or json, got ${o.format}`);
        }
        if (o.format === "json" && ids.length !== 1) {
          throw new RangeError("--format json exports exactly one session: give its id");
        }
        if ((o.deleteAfterExport || o.checkpoint) && !o.output) {
          throw new RangeError(
            `${o.checkpoint ? "--checkpoint" : "--delete-after-export"} needs -o FILE: the export must be on disk first`,
          );
        }
        const writes = o.deleteAfterExport === true || o.checkpoint === true;
        const store = await open(g, writes ? "writer" : "reader");
        let act: Parameters<typeof recordAct>[1] | undefined;
        try {
          const targets = ids.length ? ids : await allSessionIds(store);
          const prints = writes
            ? (await Promise.all(targets.map((id) => store.sessions.fingerprint(id)))).filter(
                (f) => f !== undefined,
              )
            : [];
          await writeExport(store, o.format, ids, o.output, g.json);
          act = {
            action: "export",
            targets: ids,
            detail: {
              format: o.format,
              output: o.output ?? "stdout",
              ...(ids.length ? {} : { all: true, sessions: targets.length }),
            },
          };
          if (writes) await recordAct(g, act, store);
          if (o.checkpoint && o.output) {
            await fsyncFile(o.output);
            for (const fp of prints) {
              if (fp.maxMessageId !== null)
                await store.meta.set(`checkpoint:${fp.id}`, String(fp.maxMessageId));
            }
          }
          if (o.deleteAfterExport && o.output) {
            await fsyncFile(o.output);
            const deleted: string[] = [];
            const changed: string[] = [];
            for (const fp of prints) {
              if (await store.sessions.deleteIfUnchanged(fp)) deleted.push(fp.id);
              else changed.push(fp.id);
            }
            const report = {
              output: o.output,
              exported: prints.length,
              deleted,
              keptBecauseChanged: changed,
            };
            if (g.json) printJson(report);
            else
              process.stderr.write(
                `exported ${prints.length} session(s) to ${o.output}; deleted ${deleted.length}; kept ${changed.length} that changed during the export\n`,
              );
          }
        } finally {
          await store.close();
        }
        // A reader's export is recorded once the reader has closed: the
        // writer opened for the row is then the store's last connection,
        // and its close checkpoints the row instead of leaving it in the
        // log for the next process to find.
        if (!writes && act) await recordAct(g, act);
      },
    );
  return sessions;
}

async function allSessionIds(store: Store): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.sessions.list({
      limit: 500,
      includeArchived: true,
      includeHidden: true,
      ...(cursor ? { cursor } : {}),
    });
    ids.push(...page.items.map((s) => s.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

async function writeExport(
  store: Store,
  format: string,
  ids: string[],
  output: string | undefined,
  json: boolean,
): Promise<void> {
  if (!output) {
    await writeTo(process.stdout, store, format, ids, json);
    return;
  }
  const out = await createOutput(output);
  try {
    await writeTo(out, store, format, ids, json);
    out.end();
    await once(out, "finish");
  } catch (err) {
    // A failed export leaves no partial file behind to block the retry.
    out.destroy();
    rmSync(output, { force: true });
    throw (err as { syscall?: unknown }).syscall
      ? outputError(output, (err as Error).message)
      : err;
  }
}

async function writeTo(
  out: NodeJS.WritableStream,
  store: Store,
  format: string,
  ids: string[],
  json: boolean,
): Promise<void> {
  // A write error (disk full, EIO) fails the export instead of leaving the process unsettled.
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => undefined);
  if (format === "json") {
    const id = ids[0]!;
    const session = await store.sessions.require(id);
    const messages = await store.messages.load(id, { includeHistory: true });
    out.write(`${JSON.stringify({ session, messages }, null, 2)}\n`);
    return;
  }
  // One session at a time, so a terminal can show how far the export is.
  // All sessions go in id order, as the library's export does.
  const targets = ids.length ? ids : (await allSessionIds(store)).sort();
  const bar = progress(targets.length, "export", json);
  try {
    for (const id of targets) {
      for await (const chunk of store.export({
        format: format as "jsonl" | "markdown",
        sessionIds: [id],
      })) {
        if (!out.write(chunk)) await Promise.race([once(out, "drain"), failed]);
      }
      bar.tick();
    }
  } finally {
    bar.stop();
  }
}

/**
 * The export file: created here, exclusively, never through a symbolic
 * link, 0600. It must not exist yet; its directory must.
 */
async function createOutput(path: string) {
  let fd: number;
  try {
    fd = await openExclusive(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "EEXIST"
        ? "it already exists (export never overwrites; a symbolic link counts as existing)"
        : code === "ENOENT"
          ? "its directory does not exist"
          : code === "ELOOP"
            ? "it is a symbolic link"
            : (err as Error).message;
    throw outputError(path, why);
  }
  return createWriteStream(path, { fd });
}

function outputError(path: string, why: string): HearthError {
  return new HearthError("HEARTH_OUTPUT_UNWRITABLE", `cannot write the export to ${path}: ${why}`, {
    resource: path,
    hint: "choose a new file name in an existing directory",
  });
}
