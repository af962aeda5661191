/**
 * Hermes Agent's state.db as an import source: a snapshot of it (never the
 * file itself), its schema checked, its sessions parents first.
 */
import {
  type ForeignReader,
  type ForeignSnapshotOptions,
  snapshotForeign,
} from "../../store/sqlite/foreign-source.js";
import {
  type ImportSource,
  parentsFirst,
  type SourceSession,
  secondsToMs,
  Tally,
} from "../source.js";
import { HERMES_PREFIX, hearthSessionId, mapMessage, mapSession } from "./map.js";
import { detectHermesSchema, type HermesSchema } from "./schema.js";

export async function openHermesSource(
  path: string,
  options: ForeignSnapshotOptions,
): Promise<ImportSource> {
  const snapshot = await snapshotForeign(path, options);
  try {
    const schema = detectHermesSchema(snapshot.reader, path);
    const tally = new Tally();
    for (const t of schema.otherTables) tally.add(`table.${t.name} (rows)`, t.rows);
    const total = Number(snapshot.reader.get("SELECT count(*) AS n FROM messages")?.n ?? 0);
    return {
      kind: "hermes",
      path,
      schemaVersion: schema.version,
      snapshot: snapshot.how,
      messageTotal: total,
      clientIdPrefix: HERMES_PREFIX,
      sessions: () => sessions(snapshot.reader, schema, tally),
      noHome: tally,
      problems: [],
      close: () => snapshot.close(),
    };
  } catch (err) {
    snapshot.close();
    throw err;
  }
}

function* sessions(db: ForeignReader, schema: HermesSchema, tally: Tally): Iterable<SourceSession> {
  const links = db.all(
    "SELECT id, parent_session_id AS parent FROM sessions ORDER BY started_at, id",
  );
  const known = new Set(links.map((l) => String(l.id)));
  for (const id of parentsFirst(links)) {
    const row = db.get("SELECT * FROM sessions WHERE id = ?", id)!;
    if (schema.systemPrompts && row.system_prompt_hash) tally.add("session.system_prompt");
    const parent = row.parent_session_id == null ? null : String(row.parent_session_id);
    const session = mapSession(
      row,
      parent !== null && known.has(parent) ? hearthSessionId(parent) : null,
      tally,
    );
    if (secondsToMs(row.started_at) === undefined) {
      const first = db.get(
        "SELECT min(timestamp) AS t FROM messages WHERE session_id = ? AND typeof(timestamp) IN ('real', 'integer')",
        id,
      )?.t;
      session.createdAt = secondsToMs(first) ?? 0;
    }
    yield {
      session,
      sourceId: id,
      *messages() {
        for (const m of db.iterate("SELECT * FROM messages WHERE session_id = ? ORDER BY id", id)) {
          const mapped = mapMessage(m, session.createdAt, tally);
          if (mapped) yield mapped;
        }
      },
    };
  }
}
