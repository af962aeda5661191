import { statSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lockDevice, parseLocks } from "../../src/process/proc-locks.js";

// A /proc/locks as Linux prints it: POSIX, OFD (pid -1), FLOCK, a lease and
// blocked waiters ("->"), which hold nothing.
const PROC_LOCKS = [
  "1: POSIX  ADVISORY  WRITE 3008891 fe:00:2147040 1073741824 1073741824",
  "1: -> POSIX  ADVISORY  WRITE 133534 fe:00:2147040 1073741824 1073741824",
  "2: OFDLCK ADVISORY  READ  -1 fe:00:2147041 128 128",
  "2: -> OFDLCK ADVISORY  WRITE -1 fe:00:2147041 128 128",
  "3: FLOCK  ADVISORY  WRITE 4242 08:01:12345 0 EOF",
  "4: POSIX  ADVISORY  READ 1234 00:2d:99 1073741826 1073742335",
  "5: LEASE  ACTIVE    READ 777 103:02:5 0 EOF",
  "",
].join("\n");

describe("parseLocks", () => {
  it("reads holders and skips blocked waiters", () => {
    expect(parseLocks(PROC_LOCKS)).toEqual([
      {
        kind: "POSIX",
        access: "WRITE",
        pid: 3008891,
        device: "fe:00",
        inode: 2147040,
        start: 1073741824,
        end: 1073741824,
      },
      {
        kind: "OFDLCK",
        access: "READ",
        pid: -1,
        device: "fe:00",
        inode: 2147041,
        start: 128,
        end: 128,
      },
      {
        kind: "FLOCK",
        access: "WRITE",
        pid: 4242,
        device: "08:01",
        inode: 12345,
        start: 0,
        end: Number.POSITIVE_INFINITY,
      },
      {
        kind: "POSIX",
        access: "READ",
        pid: 1234,
        device: "00:2d",
        inode: 99,
        start: 1073741826,
        end: 1073742335,
      },
      {
        kind: "LEASE",
        access: "READ",
        pid: 777,
        device: "103:02",
        inode: 5,
        start: 0,
        end: Number.POSITIVE_INFINITY,
      },
    ]);
  });

  it("reads fdinfo lock lines once the 'lock:' prefix is removed", () => {
    const fdinfo =
      "pos:\t0\nflags:\t02100002\nmnt_id:\t29\nino:\t2147041\n" +
      "lock:\t1: OFDLCK ADVISORY  READ  -1 fe:00:2147041 128 128\n";
    expect(parseLocks(fdinfo.replace(/^lock:\s*/gm, ""))).toEqual([
      {
        kind: "OFDLCK",
        access: "READ",
        pid: -1,
        device: "fe:00",
        inode: 2147041,
        start: 128,
        end: 128,
      },
    ]);
  });

  it("ignores blank, short and malformed lines", () => {
    const text = [
      "",
      "   ",
      "1: POSIX ADVISORY WRITE",
      "2: POSIX ADVISORY WRITE 12 fe:00 0 EOF",
      "3: POSIX ADVISORY WRITE 12 fe:00:1:2 0 EOF",
    ].join("\n");
    expect(parseLocks(text)).toEqual([]);
  });

  it("tolerates leading spaces the kernel adds before wide lock ids", () => {
    expect(parseLocks("  9: POSIX  ADVISORY  WRITE 55 fe:00:7 0 EOF")).toEqual([
      {
        kind: "POSIX",
        access: "WRITE",
        pid: 55,
        device: "fe:00",
        inode: 7,
        start: 0,
        end: Number.POSITIVE_INFINITY,
      },
    ]);
  });
});

/** glibc's makedev: the st_dev encoding stat() returns. */
function makedev(major: number, minor: number): number {
  return ((major & 0xfff) << 8) + (minor & 0xff) + (minor & ~0xff) * 4096;
}

describe("lockDevice", () => {
  it("formats st_dev as /proc/locks does", () => {
    expect(lockDevice(65024)).toBe("fe:00");
    expect(lockDevice(2049)).toBe("08:01");
    expect(lockDevice(0x2d)).toBe("00:2d");
    expect(lockDevice(makedev(259, 2))).toBe("103:02");
    expect(lockDevice(makedev(0, 256))).toBe("00:100");
  });

  it("round-trips every major < 4096 and minor < 2^20", () => {
    fc.assert(
      fc.property(fc.nat(0xfff), fc.nat(0xfffff), (major, minor) => {
        const hex = (n: number) => n.toString(16).padStart(2, "0");
        expect(lockDevice(makedev(major, minor))).toBe(`${hex(major)}:${hex(minor)}`);
      }),
    );
  });

  it("agrees with the device of a real file", () => {
    const { dev } = statSync(import.meta.filename ?? new URL(import.meta.url).pathname);
    const [major, minor] = lockDevice(dev)
      .split(":")
      .map((h: string) => Number.parseInt(h, 16));
    expect(makedev(major!, minor!)).toBe(dev);
  });
});
