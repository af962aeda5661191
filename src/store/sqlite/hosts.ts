import type { HostEntry, HostsSql } from "../hosts.js";

/** SQLite is one host's: nothing is announced (hearth ps reads the local processes). */
export class SqliteHosts implements HostsSql {
  async announce(_entry: HostEntry): Promise<void> {}

  async live(): Promise<HostEntry[]> {
    return [];
  }
}
