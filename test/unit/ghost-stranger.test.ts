import { describe, expect, it } from "vitest";
import { type LockEntry, lockDevice, parseLocks } from "../../src/process/proc-locks.js";
import { strangerOn } from "../../src/store/sqlite/ghost-wal.js";

// The ghost save's last check (src/store/sqlite/ghost-wal.ts): no process may
// hold the database without the removed -shm. /proc/locks is read in
// page-sized pieces, each its own snapshot, so one read can skip any line
// (a stable 600 locks read as 580-621 beside a busy locker, measured here):
// the check joins three reads, and a process seen in any of them counts.

const db = { dev: 0xfe00, ino: 100 };
const shm = { dev: 0xfe00, ino: 200 };
const SELF = 10;
const line = (n: number, pid: number, ino: number, start = 1073741826) =>
  `${n}: POSIX  ADVISORY  READ ${pid} ${lockDevice(db.dev)}:${ino} ${start} ${start}`;
const read = (...lines: string[]): LockEntry[] => parseLocks(lines.join("\n"));

describe("a process on the database through newer files (the ghost save's check)", () => {
  const self = [line(1, SELF, db.ino), line(2, SELF, shm.ino, 128)];
  const sibling = [line(3, 20, db.ino), line(4, 20, shm.ino, 128)];
  const stranger = line(5, 30, db.ino);

  it("is found when only one of the reads shows it (the others skipped its line)", () => {
    const reads = [read(...self, ...sibling), read(...self, ...sibling, stranger), read(...self)];
    expect(strangerOn(reads, db, shm, SELF)).toBe(30);
  });

  it("is not made of a process whose -shm lock one read skipped", () => {
    const reads = [read(...self, line(3, 20, db.ino)), read(...self, ...sibling)];
    expect(strangerOn(reads, db, shm, SELF)).toBeUndefined();
  });

  it("is none when every holder of the database also holds the removed -shm", () => {
    const reads = [read(...self, ...sibling), read(...self, ...sibling)];
    expect(strangerOn(reads, db, shm, SELF)).toBeUndefined();
  });
});
