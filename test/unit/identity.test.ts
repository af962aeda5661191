import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeProcess, parseStartTicks, readBootId } from "../../src/process/identity.js";

/** A /proc/<pid>/stat line with `comm` and field 22 (starttime) as given. */
function statLine(pid: number, comm: string, startTicks: number): string {
  // Fields 3..52; index i here is field i + 3.
  const rest = [
    "S",
    "1",
    "1234",
    "1234",
    "0",
    "-1",
    "4194560",
    "1500",
    "0",
    "3",
    "0",
    "25",
    "7",
    "0",
    "0",
    "20",
    "0",
    "11",
    "0",
    String(startTicks),
    "1191112704",
    "20000",
    "18446744073709551615",
    "1",
    "1",
    "0",
    "0",
    "0",
    "0",
    "0",
    "4096",
    "134234626",
    "0",
    "0",
    "0",
    "17",
    "3",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
    "0",
  ];
  return `${pid} (${comm}) ${rest.join(" ")}\n`;
}

describe("parseStartTicks", () => {
  it("reads field 22", () => {
    expect(parseStartTicks(statLine(1234, "hearth", 84757))).toBe(84757);
  });

  it("is not fooled by spaces and parentheses in comm", () => {
    const line = statLine(1234, "a) b) c", 987654);
    expect(line.startsWith("1234 (a) b) c) S 1 ")).toBe(true);
    expect(parseStartTicks(line)).toBe(987654);
    expect(parseStartTicks(statLine(1, ") ) 1 2 3 4 5 6 7 8 9 10", 42))).toBe(42);
    expect(parseStartTicks(statLine(1, "", 7))).toBe(7);
  });

  it("reads a line captured from Linux", () => {
    const real =
      "3884 (cat) R 3879 3879 3322 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 84757 3133440 381 " +
      "18446744073709551615 94742832611328 94742832631209 140731410900544 0 0 0 0 0 0 0 0 0 17 " +
      "0 0 0 0 0 0 94742832647216 94742832648832 94743473463296 140731410905826 " +
      "140731410905846 140731410905846 140731410907115 0";
    expect(parseStartTicks(real)).toBe(84757);
  });

  it("returns undefined for text that is not a stat line", () => {
    expect(parseStartTicks("")).toBeUndefined();
    expect(parseStartTicks("1234 hearth S 1")).toBeUndefined();
    expect(parseStartTicks("1234 (hearth) S 1 2 3")).toBeUndefined();
    expect(parseStartTicks(statLine(1, "x", 0).replace(" 0 1191112704", " x 1191112704"))).toBe(
      undefined,
    );
  });
});

describe("describeProcess", () => {
  it("describes this process from /proc", () => {
    const info = describeProcess(process.pid);
    expect(info.pid).toBe(process.pid);
    expect(info.startTicks).toBe(parseStartTicks(readFileSync("/proc/self/stat", "utf8")));
    expect(info.startTicks).toEqual(expect.any(Number));
    expect(info.since).toBeInstanceOf(Date);
    const since = info.since!.getTime();
    expect(since).toBeLessThanOrEqual(Date.now());
    // Started no earlier than process.uptime() ago, give or take clock-tick rounding.
    expect(Math.abs(since - (Date.now() - process.uptime() * 1000))).toBeLessThan(5_000);
    expect(info.commandLine).toContain(process.argv0.split("/").pop());
  });

  it("returns undefined fields for a pid that does not exist", () => {
    const info = describeProcess(2 ** 22 + 1);
    expect(info).toEqual({
      pid: 2 ** 22 + 1,
      startTicks: undefined,
      since: undefined,
      commandLine: undefined,
    });
  });
});

describe("readBootId", () => {
  it("reads the kernel's boot id", () => {
    expect(readBootId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
