/**
 * An OpenClaw state dir as an import source: each agent's
 * `agents/<agent>/sessions/sessions.json` (session key -> entry) and one
 * append-only JSONL transcript per session. Files are only read; each
 * transcript is read up to the length it had when the import began, so the
 * import and its verification see the same lines while OpenClaw appends.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { basename, join } from "node:path";
import { HearthError } from "../../errors.js";
import { failpointFails } from "../../failpoints.js";
import { inspectFilesystem } from "../../files/fs-type.js";
import { lstatOrNull } from "../../files/inspect.js";
import type { ImportedMessage, ImportedSession } from "../../store/imports.js";
import { type ImportSource, parentsFirst, type SourceSession, Tally } from "../source.js";
import { mapEntry, OPENCLAW_PREFIX, timeOf } from "./map.js";

interface Transcript {
  /** The session id (the file's name without .jsonl). */
  id: string;
  file: string;
  /** Bytes read: the file's length when the import began. */
  length: number;
  key: string | null;
  agent: string;
  entry: Record<string, unknown>;
}

export function openOpenClawSource(path: string): ImportSource {
  checkDir(path);
  const tally = new Tally();
  const problems: string[] = [];
  const transcripts: Transcript[] = [];
  for (const { agent, dir } of stores(path)) transcripts.push(...discover(agent, dir, problems));
  const byId = new Map(transcripts.map((t) => [t.id, t]));
  // Headers first (for parents and start times): one pass over the first line of each file.
  const headers = new Map(transcripts.map((t) => [t.id, header(t)]));
  const links = transcripts.map((t) => {
    const parent = headers.get(t.id)?.parentSession;
    const parentId = typeof parent === "string" ? basename(parent).replace(/\.jsonl$/, "") : null;
    return { id: t.id, parent: parentId !== null && byId.has(parentId) ? parentId : null };
  });
  const messageTotal = transcripts.reduce((n, t) => n + lines(t).length, 0);
  function* sessions(): Iterable<SourceSession> {
    for (const id of parentsFirst(links)) {
      const t = byId.get(id)!;
      const session = toSession(t, headers.get(id) ?? {}, links.find((l) => l.id === id)!.parent);
      yield {
        session,
        sourceId: t.key ?? t.id,
        messages: () => messages(t, session.createdAt, tally, problems),
      };
    }
  }
  return {
    kind: "openclaw",
    path,
    schemaVersion: null,
    snapshot: "files",
    messageTotal,
    clientIdPrefix: OPENCLAW_PREFIX,
    sessions,
    noHome: tally,
    problems,
    close: () => undefined,
  };
}

function checkDir(path: string): void {
  const st = lstatOrNull(path);
  if (st === null || (!st.isDirectory() && !st.isSymbolicLink()))
    throw new HearthError(
      "HEARTH_IMPORT_SOURCE_INVALID",
      `refusing to import ${path}: it is not a directory`,
      {
        resource: path,
        hint: "give OpenClaw's state dir (~/.openclaw, or $OPENCLAW_STATE_DIR)",
      },
    );
  if (st.isSymbolicLink())
    throw new HearthError(
      "HEARTH_PATH_SYMLINK",
      `refusing to import ${path}: it is a symbolic link`,
      {
        resource: path,
        hint: `give the real directory (readlink -f ${path}), after checking it is the one you mean`,
      },
    );
  const reason = failpointFails("import.source-fs")
    ? "mountinfo reports a nfs filesystem"
    : inspectFilesystem(join(path, ".")).walUnsafeReason;
  if (reason)
    throw new HearthError("HEARTH_IMPORT_UNSAFE_FS", `refusing to import ${path}: ${reason}`, {
      resource: path,
      hint: "copy the directory to a local disk while OpenClaw is stopped, and import the copy",
    });
}

/** The session stores under `path`: the dir itself when it holds sessions.json, else agents/<id>/sessions. */
function stores(path: string): { agent: string; dir: string }[] {
  if (lstatOrNull(join(path, "sessions.json")))
    return [{ agent: basename(join(path, "..")), dir: path }];
  const agents = join(path, "agents");
  const found = (lstatOrNull(agents)?.isDirectory() ? readdirSync(agents) : [])
    .sort()
    .map((agent) => ({ agent, dir: join(agents, agent, "sessions") }))
    .filter((s) => lstatOrNull(join(s.dir, "sessions.json")) !== null);
  if (found.length === 0)
    throw new HearthError(
      "HEARTH_IMPORT_SOURCE_INVALID",
      `refusing to import ${path}: no agents/<agent>/sessions/sessions.json under it`,
      { resource: path, hint: "give OpenClaw's state dir (~/.openclaw, or $OPENCLAW_STATE_DIR)" },
    );
  return found;
}

function discover(agent: string, dir: string, problems: string[]): Transcript[] {
  const index = join(dir, "sessions.json");
  let store: Record<string, unknown>;
  try {
    store = JSON.parse(readAll(index, Number.POSITIVE_INFINITY).toString("utf8")) as Record<
      string,
      unknown
    >;
    if (store === null || typeof store !== "object" || Array.isArray(store))
      throw new TypeError("not an object");
  } catch (err) {
    if (err instanceof HearthError) throw err;
    throw new HearthError(
      "HEARTH_IMPORT_SOURCE_INVALID",
      `refusing to import ${index}: it is not a JSON object (${(err as Error).message})`,
      {
        resource: index,
        hint: "check the file; OpenClaw rewrites it from its gateway (openclaw sessions cleanup --dry-run shows what it holds)",
      },
    );
  }
  const out: Transcript[] = [];
  const seen = new Set<string>();
  const add = (id: string, key: string | null, entry: Record<string, unknown>) => {
    if (seen.has(id)) return;
    seen.add(id);
    const file = join(dir, `${id}.jsonl`);
    const st = lstatOrNull(file);
    if (st?.isSymbolicLink())
      throw new HearthError(
        "HEARTH_PATH_SYMLINK",
        `refusing to import ${file}: it is a symbolic link`,
        {
          resource: file,
          hint: "put the real file in its place, after checking it is the one you mean",
        },
      );
    if (st === null)
      problems.push(`${file}: missing (session ${key ?? id}); imported without messages`);
    out.push({ id, file, length: st?.isFile() ? st.size : 0, key, agent, entry });
  };
  for (const [key, entry] of Object.entries(store)) {
    if (entry === null || typeof entry !== "object") continue;
    const e = entry as Record<string, unknown>;
    const file =
      typeof e.sessionFile === "string" ? basename(e.sessionFile).replace(/\.jsonl$/, "") : null;
    const id = file ?? (typeof e.sessionId === "string" ? e.sessionId : null);
    if (id && /^[^/\\.][^/\\]*$/.test(id)) add(id, key, e);
  }
  // Transcripts no key points at any more (earlier sessions of a key, after a reset): history too.
  for (const name of readdirSync(dir).sort())
    if (/^[^.]+\.jsonl$/.test(name)) add(name.slice(0, -".jsonl".length), null, {});
  return out;
}

function readAll(file: string, limit: number): Buffer {
  const fd = openSync(file, "r");
  try {
    const size = Math.min(fstatSync(fd).size, limit);
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/** The transcript's lines as of the import's start; the last is "" when the file ends with a newline. */
function lines(t: Transcript): string[] {
  return t.length === 0 ? [] : readAll(t.file, t.length).toString("utf8").split("\n");
}

function header(t: Transcript): Record<string, unknown> {
  const first = lines(t)[0];
  try {
    const h = first ? (JSON.parse(first) as Record<string, unknown>) : {};
    return h?.type === "session" ? h : {};
  } catch {
    return {};
  }
}

function toSession(
  t: Transcript,
  h: Record<string, unknown>,
  parent: string | null,
): ImportedSession {
  const e = t.entry;
  const createdAt = timeOf(h.timestamp) ?? timeOf(e.sessionStartedAt) ?? timeOf(e.updatedAt) ?? 0;
  const parts = t.key?.split(":") ?? [];
  const channel =
    parts[0] === "agent" && parts.length >= 4
      ? parts[2]!
      : parts[0] === "cron" || parts[0] === "hook"
        ? parts[0]
        : null;
  const title = [e.displayName, e.subject, e.label].find(
    (v) => typeof v === "string" && v.trim() !== "",
  ) as string | undefined;
  const openclaw: Record<string, string> = { sessionId: t.id, agent: t.agent };
  if (t.key) openclaw.sessionKey = t.key;
  if (typeof h.cwd === "string") openclaw.cwd = h.cwd;
  if (typeof e.chatType === "string") openclaw.chatType = e.chatType;
  return {
    id: `openclaw-${t.id}`,
    source: channel ?? "openclaw",
    chatKey: t.key,
    title: title && title.length <= 200 ? title : null,
    titleSource: title ? "auto" : null,
    createdAt,
    endedAt: null,
    endReason: null,
    parentId: parent === null ? null : `openclaw-${parent}`,
    ownerId: null,
    pinned: false,
    archived: false,
    hidden: false,
    metadata: { openclaw },
  };
}

function* messages(
  t: Transcript,
  startedAt: number,
  tally: Tally,
  problems: string[],
): Iterable<ImportedMessage> {
  const all = lines(t);
  const entries: { entry: Record<string, unknown>; line: number }[] = [];
  for (let i = 0; i < all.length; i++) {
    const text = all[i]!;
    if (text.trim() === "") continue;
    try {
      const entry = JSON.parse(text) as unknown;
      if (entry === null || typeof entry !== "object" || Array.isArray(entry))
        throw new TypeError("not an object");
      entries.push({ entry: entry as Record<string, unknown>, line: i + 1 });
    } catch (err) {
      if (!tally.counting) continue;
      problems.push(
        i === all.length - 1
          ? `${t.file}:${i + 1}: an incomplete last line (still being written); the next run imports it`
          : `${t.file}:${i + 1}: not a JSON object (${(err as Error).message}); the line was skipped, the rest imported`,
      );
    }
  }
  const states = branchStates(entries.map((e) => e.entry));
  for (const { entry, line } of entries) {
    if (entry.type === "session") continue;
    const id = typeof entry.id === "string" && entry.id !== "" ? entry.id : `line-${line}`;
    const m = mapEntry(
      entry,
      `${OPENCLAW_PREFIX}${id}`,
      startedAt,
      states.get(entry) ?? LIVE,
      tally,
    );
    if (m) yield m;
  }
}

const LIVE = { active: true, archivedReason: null } as const;

/**
 * Which entries are off the live branch: a transcript is a tree (id,
 * parentId); the live branch runs from the last entry to the root. Entries
 * elsewhere were rewound; entries on it before the last compaction's
 * first kept entry were compacted. A transcript without parent links is one line.
 */
function branchStates(
  entries: Record<string, unknown>[],
): Map<
  Record<string, unknown>,
  { active: boolean; archivedReason: "rewind" | "compaction" | null }
> {
  const states = new Map<
    Record<string, unknown>,
    { active: boolean; archivedReason: "rewind" | "compaction" | null }
  >();
  const tree = entries.filter((e) => typeof e.id === "string" && e.type !== "session");
  if (!tree.some((e) => "parentId" in e)) return states;
  const byId = new Map(tree.map((e) => [e.id as string, e]));
  const path: Record<string, unknown>[] = [];
  for (let at = tree.at(-1); at && !path.includes(at); at = byId.get(String(at.parentId)))
    path.unshift(at);
  const place = new Map(path.map((e, i) => [e, i]));
  const compaction = path.findLast((e) => e.type === "compaction");
  const kept = compaction ? path.findIndex((e) => e.id === compaction.firstKeptEntryId) : -1;
  const cut = compaction ? (kept >= 0 ? kept : path.indexOf(compaction)) : 0;
  for (const e of tree) {
    const i = place.get(e);
    if (i === undefined) states.set(e, { active: false, archivedReason: "rewind" });
    else if (i < cut) states.set(e, { active: false, archivedReason: "compaction" });
  }
  return states;
}
