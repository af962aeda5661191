// The checks after every crash and at the end of a torture run.
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runNode } from "./proc.mjs";

const CHECKER = fileURLToPath(new URL("../check-store.mjs", import.meta.url));
/** config.schema.ts: backup.forensicKeep defaults to 3. */
const FORENSIC_KEEP = 3;

export class Checks {
  constructor({ home, ledger, stats, actors }) {
    this.home = home;
    this.db = join(home, "state.db");
    this.ledger = ledger;
    this.stats = stats;
    this.actors = actors;
    this.queue = Promise.resolve();
    this.lost = new Set();
    this.duplicated = new Set();
  }

  /** Run the checks (one at a time); `label` says which crash they follow. */
  run(label) {
    this.queue = this.queue.then(() => this.once(label));
    return this.queue;
  }

  async once(label) {
    this.stats.checks++;
    // Only writes acknowledged before the check started must be there.
    const acked = this.ledger.read();
    this.ghosts(label);
    this.forensic(label);
    let report;
    for (let attempt = 0; attempt < 3 && !report?.ok; attempt++) {
      const r = await runNode([CHECKER, this.db], { ms: 120_000 });
      try {
        report = JSON.parse(r.stdout);
      } catch {
        report = {
          ok: false,
          message: `checker exited ${r.signal ?? r.code}: ${r.stderr.slice(0, 500)}`,
        };
      }
      if (!report.ok) await new Promise((res) => setTimeout(res, 500));
    }
    if (!report.ok) {
      this.stats.integrityFailures.push(
        `${label}: the store could not be checked: ${report.message}`,
      );
      return;
    }
    if (report.integrity.length > 0)
      this.stats.integrityFailures.push(`${label}: ${report.integrity.slice(0, 10).join("; ")}`);
    const stored = new Map();
    for (const [clientId, session] of report.rows) {
      const list = stored.get(clientId) ?? [];
      list.push(session);
      stored.set(clientId, list);
    }
    for (const [clientId, sessions] of stored) {
      if (sessions.length > 1 && !this.duplicated.has(clientId)) {
        this.duplicated.add(clientId);
        this.stats.duplicated.push({ label, clientId, sessions });
      }
    }
    for (const [clientId, e] of acked) {
      const sessions = stored.get(clientId) ?? [];
      if (!sessions.includes(e.session) && !this.lost.has(clientId)) {
        this.lost.add(clientId);
        this.stats.lost.push({
          label,
          clientId,
          session: e.session,
          source: e.source,
          foundIn: sessions,
        });
      }
    }
  }

  /** No hearth process may hold a descriptor on a deleted -wal or -shm (a ghost generation). */
  ghosts(label) {
    for (const p of this.actors.holders()) {
      let fds = [];
      try {
        fds = readdirSync(`/proc/${p.pid}/fd`);
      } catch {
        continue; // it just exited
      }
      for (const fd of fds) {
        let target = "";
        try {
          target = readlinkSync(`/proc/${p.pid}/fd/${fd}`);
        } catch {
          continue;
        }
        if (target.startsWith(this.db) && target.endsWith("(deleted)"))
          this.stats.ghostDescriptors.push(`${label}: ${p.name} ${p.pid} holds ${target}`);
      }
    }
  }

  /** Forensic copies never exceed their cap. */
  forensic(label) {
    let names = [];
    try {
      names = readdirSync(join(this.home, "backups", "forensic"));
    } catch {
      return;
    }
    const copies = names.filter((n) => n.startsWith("default-"));
    if (copies.length > FORENSIC_KEEP)
      this.stats.forensicOverCap.push(
        `${label}: ${copies.length} forensic copies (cap ${FORENSIC_KEEP})`,
      );
  }
}
