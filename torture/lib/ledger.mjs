// The ledger of acknowledged writes, a file outside the store: a write is
// appended here (synchronously) before the run counts it.
import { appendFileSync, readFileSync } from "node:fs";

export class Ledger {
  constructor(path) {
    this.path = path;
    /** clientId -> { session, source, profile } */
    this.acked = new Map();
    appendFileSync(path, "");
  }

  ack(clientId, session, source, profile = "default") {
    appendFileSync(this.path, `${JSON.stringify({ clientId, session, source, profile })}\n`);
    this.acked.set(clientId, { session, source, profile });
  }

  /** What the file says (the in-memory map is only a mirror of it); only `profile`'s when given. */
  read(profile) {
    const acked = new Map();
    for (const line of readFileSync(this.path, "utf8").split("\n")) {
      if (line === "") continue;
      const e = JSON.parse(line);
      if (profile === undefined || (e.profile ?? "default") === profile) acked.set(e.clientId, e);
    }
    return acked;
  }

  count(source, profile) {
    let n = 0;
    for (const e of this.acked.values())
      if (
        (source === undefined || e.source === source) &&
        (profile === undefined || e.profile === profile)
      )
        n++;
    return n;
  }
}
