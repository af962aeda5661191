/**
 * The parts every store is made of, built the same way on every backend: a
 * backend hands over its statements, one `<Concept>Sql` per part, and gets
 * back the neutral API objects, each passed through `wrap` (the backend's
 * error policy and door).
 */
import type { StoreParts } from "./api.js";
import { Audit, type AuditSql } from "./audit.js";
import { Browse, type BrowseSql } from "./browse.js";
import { BrowserLogins, type BrowserLoginsSql } from "./browser-logins.js";
import { GraphCheckpoints, type GraphCheckpointsSql } from "./graph-checkpoints.js";
import { Handoffs, type HandoffsSql } from "./handoffs.js";
import { Hosts, type HostsSql } from "./hosts.js";
import { Imports, type ImportsSql } from "./imports.js";
import { JsonTail, type JsonTailSql } from "./json-tail.js";
import { Messages, type MessagesSql } from "./messages.js";
import { Meta, type MetaSql } from "./meta.js";
import type { Redactor } from "./redaction.js";
import { Runs, type RunsSql } from "./runs.js";
import { Sessions, type SessionsSql } from "./sessions.js";
import { Stats, type StatsSql } from "./stats.js";
import { Tokens, type TokensSql } from "./tokens.js";
import { ToolPermissions, type ToolPermissionsSql } from "./tool-permissions.js";

/** A backend's statements, one interface per part of the store. */
export interface StoreSql {
  sessions: SessionsSql;
  messages: MessagesSql;
  meta: MetaSql;
  handoffs: HandoffsSql;
  tokens: TokensSql;
  browserLogins: BrowserLoginsSql;
  hosts: HostsSql;
  browse: BrowseSql;
  runs: RunsSql;
  stats: StatsSql;
  graphCheckpoints: GraphCheckpointsSql;
  jsonTail: JsonTailSql;
  audit: AuditSql;
  toolPermissions: ToolPermissionsSql;
  imports: ImportsSql;
}

/** What a backend does to each API object before handing it out (its error policy, its door). */
export type WrapPart = <K extends keyof StoreParts>(name: K, part: StoreParts[K]) => StoreParts[K];

/** The store's API objects on a backend's statements; `redact`: the profile's redaction (off: undefined). */
export function storeParts(sql: StoreSql, wrap: WrapPart, redact?: Redactor): StoreParts {
  return {
    sessions: wrap("sessions", new Sessions(sql.sessions)),
    messages: wrap("messages", new Messages(sql.messages, Date.now, redact)),
    meta: wrap("meta", new Meta(sql.meta)),
    handoffs: wrap("handoffs", new Handoffs(sql.handoffs)),
    tokens: wrap("tokens", new Tokens(sql.tokens)),
    browserLogins: wrap("browserLogins", new BrowserLogins(sql.browserLogins)),
    hosts: wrap("hosts", new Hosts(sql.hosts)),
    browse: wrap("browse", new Browse(sql.browse)),
    runs: wrap("runs", new Runs(sql.runs)),
    stats: wrap("stats", new Stats(sql.stats)),
    graphCheckpoints: wrap("graphCheckpoints", new GraphCheckpoints(sql.graphCheckpoints)),
    jsonTail: wrap("jsonTail", new JsonTail(sql.jsonTail)),
    audit: wrap("audit", new Audit(sql.audit)),
    toolPermissions: wrap("toolPermissions", new ToolPermissions(sql.toolPermissions)),
    imports: wrap("imports", new Imports(sql.imports, redact)),
  };
}
