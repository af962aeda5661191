// The ledger of acknowledged writes, a file outside the store: a write is
// appended here (synchronously) before the run counts it.
import { appendFileSync, readFileSync } from "node:fs";

export class Ledger {
  constructor(path) {
    this.path = path;
    /** clientId -> { session, source } */
    this.acked = new Map();
    appendFileSync(path, "");
  }

  ack(clientId, session, source) {
    appendFileSync(this.path, `${JSON.stringify({ clientId, session, source })}\n`);
    this.acked.set(clientId, { session, source });
  }

  /** What the file says (the in-memory map is only a mirror of it). */
  read() {
    const acked = new Map();
    for (const line of readFileSync(this.path, "utf8").split("\n")) {
      if (line === "") continue;
      const e = JSON.parse(line);
      acked.set(e.clientId, e);
    }
    return acked;
  }

  count(source) {
    let n = 0;
    for (const e of this.acked.values()) if (source === undefined || e.source === source) n++;
    return n;
  }
}
