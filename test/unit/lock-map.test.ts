import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import fsx from "fs-native-extensions";
import { describe, expect, it } from "vitest";
import {
  decodePresence,
  GATE_OFFSET,
  GATEWAY_OFFSET,
  PRESENCE_BASE,
  PRESENCE_ROLES,
  PROCESS_KINDS,
  type Presence,
  type PresenceRole,
  type ProcessKind,
  presenceOffset,
  TURNSTILE_OFFSET,
  WRITE_OFFSET,
} from "../../src/process/lock-map.js";
import { lockDevice, parseLocks } from "../../src/process/proc-locks.js";

const PID_SPAN = 2 ** 23;
const ROLE_SLOTS = 4;

const kind = fc.constantFrom(...PROCESS_KINDS);
const role = fc.constantFrom(...PRESENCE_ROLES);
/** Every pid Linux can hand out (PID_MAX_LIMIT is 2^22). */
const pid = fc.integer({ min: 1, max: 2 ** 22 });
const presence = fc.record({ pid, kind, role });

describe("presenceOffset / decodePresence", () => {
  it("round-trips every kind, role and pid 1..2^22", () => {
    fc.assert(
      fc.property(presence, (p) => {
        const offset = presenceOffset(p);
        expect(Number.isSafeInteger(offset)).toBe(true);
        expect(offset).toBeGreaterThanOrEqual(PRESENCE_BASE);
        expect(decodePresence(offset)).toEqual(p);
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips the edges of every (kind, role) slot", () => {
    for (const k of PROCESS_KINDS) {
      for (const r of PRESENCE_ROLES) {
        for (const p of [1, 2, 2 ** 22, PID_SPAN - 1]) {
          expect(decodePresence(presenceOffset({ pid: p, kind: k, role: r }))).toEqual({
            pid: p,
            kind: k,
            role: r,
          });
        }
      }
    }
  });

  it("gives different presences different offsets", () => {
    fc.assert(
      fc.property(presence, presence, (a, b) => {
        const same = a.pid === b.pid && a.kind === b.kind && a.role === b.role;
        expect(presenceOffset(a) === presenceOffset(b)).toBe(same);
      }),
      { numRuns: 2000 },
    );
    // Neighbouring pids, kinds and roles in particular.
    const seen = new Set<number>();
    for (const k of PROCESS_KINDS)
      for (const r of PRESENCE_ROLES)
        for (const p of [1, 2, PID_SPAN - 1])
          seen.add(presenceOffset({ pid: p, kind: k, role: r }));
    expect(seen.size).toBe(PROCESS_KINDS.length * PRESENCE_ROLES.length * 3);
  });

  it("decodes nothing below PRESENCE_BASE, the gate, turnstile, write and gateway bytes included", () => {
    for (const offset of [GATE_OFFSET, TURNSTILE_OFFSET, WRITE_OFFSET, GATEWAY_OFFSET]) {
      expect(offset).toBeLessThan(PRESENCE_BASE);
      expect(decodePresence(offset)).toBeUndefined();
    }
    // SQLite's own lock bytes and the -shm dead-man byte.
    for (const offset of [0, 128, 0x40000000, 0x40000001, 0x40000002, 0x400001ff]) {
      expect(decodePresence(offset)).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: PRESENCE_BASE - 1 }), (offset) => {
        expect(decodePresence(offset)).toBeUndefined();
      }),
    );
  });

  it("decodes no pid 0, in any slot", () => {
    expect(decodePresence(PRESENCE_BASE)).toBeUndefined();
    for (let k = 0; k < PROCESS_KINDS.length; k++) {
      for (let r = 0; r < PRESENCE_ROLES.length; r++) {
        const slotStart = PRESENCE_BASE + (k * ROLE_SLOTS + r) * PID_SPAN;
        expect(decodePresence(slotStart)).toBeUndefined();
        // The byte after it is pid 1 of that very slot: the boundary is exact.
        expect(decodePresence(slotStart + 1)).toEqual({
          pid: 1,
          kind: PROCESS_KINDS[k],
          role: PRESENCE_ROLES[r],
        });
      }
    }
  });

  it("uses every role slot and decodes nothing beyond the last kind", () => {
    // "parked" took the last of the four slots; a fifth role would need a new layout.
    expect(PRESENCE_ROLES.length).toBe(ROLE_SLOTS);
    const end = PRESENCE_BASE + PROCESS_KINDS.length * ROLE_SLOTS * PID_SPAN;
    fc.assert(
      fc.property(fc.integer({ min: end, max: end + 2 ** 30 }), (offset) => {
        expect(decodePresence(offset)).toBeUndefined();
      }),
    );
  });

  it("decodes nothing that is not a safe integer", () => {
    for (const offset of [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      PRESENCE_BASE + 1.5,
      Number.MAX_SAFE_INTEGER + 1,
      -1,
    ]) {
      expect(decodePresence(offset)).toBeUndefined();
    }
  });

  it("throws RangeError for pid 0, pids >= 2^23, and unknown kinds or roles", () => {
    const ok: Presence = { pid: 1, kind: "worker", role: "writer" };
    expect(() => presenceOffset(ok)).not.toThrow();
    expect(() => presenceOffset({ ...ok, pid: PID_SPAN - 1 })).not.toThrow();
    for (const bad of [0, -1, PID_SPAN, PID_SPAN + 1, 2 ** 31, 1.5, Number.NaN]) {
      expect(() => presenceOffset({ ...ok, pid: bad })).toThrow(RangeError);
    }
    fc.assert(
      fc.property(
        fc.integer({ min: PID_SPAN, max: Number.MAX_SAFE_INTEGER }),
        kind,
        role,
        (p, k, r) => {
          expect(() => presenceOffset({ pid: p, kind: k, role: r })).toThrow(RangeError);
        },
      ),
    );
    expect(() => presenceOffset({ ...ok, kind: "daemon" as ProcessKind })).toThrow(RangeError);
    expect(() => presenceOffset({ ...ok, kind: "" as ProcessKind })).toThrow(RangeError);
    expect(() => presenceOffset({ ...ok, role: "admin" as PresenceRole })).toThrow(RangeError);
  });
});

describe("a presence lock as the kernel reports it", () => {
  it("is read back from /proc/locks with the offset intact", () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-lockmap-"));
    const file = join(dir, "state.db");
    const fd = openSync(file, "w+");
    try {
      const p: Presence = { pid: process.pid, kind: "dashboard", role: "surgeon" };
      expect(fsx.tryLock(fd, presenceOffset(p), 1, { shared: true })).toBe(true);
      const st = fstatSync(fd);
      const ours = parseLocks(readFileSync("/proc/locks", "utf8")).filter(
        (l) => l.device === lockDevice(st.dev) && l.inode === st.ino,
      );
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({ kind: "OFDLCK", access: "READ", pid: -1 });
      expect(ours[0]!.start).toBe(ours[0]!.end);
      expect(decodePresence(ours[0]!.start)).toEqual(p);
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
