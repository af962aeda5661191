import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { Command } from "commander";
import { optimize } from "../../ops/optimize.js";
import { openStore } from "../../store/open.js";
import type { Session } from "../../store/types.js";
import { type GlobalOptions, globals } from "../globals.js";
import { printJson } from "../output.js";

function open(g: GlobalOptions, role: "reader" | "writer" = "reader") {
  return openStore({
    role,
    ...(g.home ? { home: g.home } : {}),
    ...(g.profile ? { profile: g.profile } : {}),
  });
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(2)} MiB`;
}

function line(s: Session): string {
  const when = new Date(s.lastActivityAt).toISOString().slice(0, 16).replace("T", " ");
  const flags = [
    s.pinned ? "pinned" : "",
    s.archived ? "archived" : "",
    s.endedAt ? "ended" : "",
  ].filter(Boolean);
  return `${s.id}  ${when}  ${String(s.messageCount).padStart(5)} msgs  ${s.title ?? "(untitled)"}${flags.length ? `  [${flags.join(", ")}]` : ""}`;
}

export function registerSessions(program: Command): void {
  const sessions = program.command("sessions").description("browse, export and maintain sessions");

  sessions
    .command("optimize")
    .description(
      "FTS optimize, ANALYZE, VACUUM and WAL truncate (structural: refuses with exit 3 while another writer holds the store)",
    )
    .option("--dry-run", "take the gate and report, change nothing")
    .action(async (o: { dryRun?: boolean }, command: Command) => {
      const g = globals(command);
      const store = await open(g, "writer");
      try {
        const tty = process.stderr.isTTY && !g.json;
        const result = await optimize(store, {
          dryRun: o.dryRun === true,
          ...(tty ? { onStep: (step: string) => process.stderr.write(`  ${step}…\n`) } : {}),
        });
        if (g.json) printJson(result);
        else {
          for (const s of result.steps)
            process.stdout.write(
              `${s.done ? "done" : "skip"}  ${s.step}${s.note ? `  (${s.note})` : ""}\n`,
            );
          process.stdout.write(
            `size: ${mib(result.sizeBefore)} -> ${mib(result.sizeAfter)} (WAL ${mib(result.walBefore)} -> ${mib(result.walAfter)})\n`,
          );
        }
      } finally {
        await store.close();
      }
    });

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
              `[${m.ordinal}] ${m.role}${m.active ? "" : ` (${m.archivedReason})`}: ${text}\n`,
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
            process.stdout.write(`${h.sessionId} #${h.ordinal} ${h.role}: ${h.snippet}\n`);
      } finally {
        await store.close();
      }
    });

  sessions
    .command("export [ids...]")
    .description("stream sessions as JSONL or Markdown (all sessions when no id is given)")
    .option("--format <format>", "jsonl or markdown", "jsonl")
    .option("-o, --output <file>", "write to a file instead of stdout")
    .action(async (ids: string[], o: { format: string; output?: string }, command: Command) => {
      const g = globals(command);
      if (o.format !== "jsonl" && o.format !== "markdown") {
        throw new RangeError(`--format must be jsonl or markdown, got ${o.format}`);
      }
      const store = await open(g);
      const out = o.output
        ? createWriteStream(o.output, { flags: "wx", mode: 0o600 })
        : process.stdout;
      try {
        for await (const chunk of store.export({
          format: o.format,
          ...(ids.length ? { sessionIds: ids } : {}),
        })) {
          if (!out.write(chunk)) await once(out, "drain");
        }
      } finally {
        await store.close();
        if (out !== process.stdout) {
          out.end();
          await once(out, "finish");
        }
      }
    });
}
