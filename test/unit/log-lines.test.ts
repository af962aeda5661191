/**
 * The log pieces every long-lived process shares: pretty lines for a
 * terminal (level names, local time, escaped text), the sink that keeps
 * events in a bounded ring and writes JSON unless its stream is a TTY, and
 * the GET /v1/events shape (fixed fields, level and limit checked).
 */
import { describe, expect, it } from "vitest";
import { eventsAnswer, warningRing } from "../../src/log/events.js";
import { parseLevel } from "../../src/log/levels.js";
import { prettyLine } from "../../src/log/pretty.js";
import { EventRing, type LogEvent } from "../../src/log/ring.js";
import { logSink } from "../../src/log/sink.js";

const at = new Date(2026, 11, 5, 9, 4, 5, 67).getTime();
const event: LogEvent = {
  level: 40,
  time: at,
  proc: "start",
  pid: 12,
  event: "child.crashed",
  name: "gateway",
  code: null,
  msg: "bad\u001b[2Jthing",
};

function stream(isTTY: boolean) {
  const out: string[] = [];
  return { out, write: (t: string) => out.push(t), isTTY };
}

describe("log lines", () => {
  it("a pretty line has the local time, the level name, the process, the event and the fields, escaped", () => {
    const line = prettyLine(event);
    expect(line).toBe(
      "2026-12-05 09:04:05.067 WARN  start[12] child.crashed bad\\x1b[2Jthing name=gateway code=null",
    );
    expect(prettyLine({ ...event, level: 50 }, { color: true })).toContain(
      "\u001b[31mERROR\u001b[0m",
    );
    expect(prettyLine({ level: 30, time: at, msg: "plain" })).toContain("INFO  ?[?] plain");
  });

  it("the sink writes JSON to a pipe, pretty lines to a terminal, and keeps what it wrote in the ring", () => {
    const ring = new EventRing(2);
    const pipe = stream(false);
    const sink = logSink({ out: pipe, ring, proc: "gateway" });
    sink.write(`${JSON.stringify({ level: 30, time: at, event: "a" })}\n`);
    sink.write("not json");
    sink.write(JSON.stringify({ level: 50, time: at, event: "c" }));
    expect(pipe.out).toEqual([
      `${JSON.stringify({ level: 30, time: at, event: "a" })}\n`,
      "not json\n",
      `${JSON.stringify({ level: 50, time: at, event: "c" })}\n`,
    ]);
    // Bounded: the oldest fell out; a text line is kept with its process.
    expect(ring.recent().map((e) => [e.proc, e.event ?? e.msg])).toEqual([
      ["gateway", "not json"],
      ["gateway", "c"],
    ]);
    expect(ring.recent(40).map((e) => e.event)).toEqual(["c"]);
    const tty = stream(true);
    logSink({ out: tty }).write(JSON.stringify(event));
    expect(tty.out[0]).toMatch(/^2026-12-05 09:04:05\.067 .*WARN.* start\[12\] child\.crashed/);
  });

  it("GET /v1/events shows fixed fields of warn and error events only, and refuses a bad level or limit", () => {
    const ring = warningRing();
    ring.push({ level: 30, time: at, event: "quiet" });
    ring.push({ ...event, err: { code: "HEARTH_NO_SPACE", message: "/secret/path full" } });
    ring.push({ level: 50, time: at, event: "other", profile: "work" });
    expect(eventsAnswer(ring, {}).events).toEqual([
      {
        time: new Date(at).toISOString(),
        level: 40,
        levelName: "warn",
        proc: "start",
        pid: 12,
        event: "child.crashed",
        msg: "bad\u001b[2Jthing",
        code: "HEARTH_NO_SPACE",
        profile: null,
      },
      expect.objectContaining({ event: "other", profile: "work" }),
    ]);
    expect(JSON.stringify(eventsAnswer(ring, {}))).not.toContain("/secret/path");
    expect(eventsAnswer(ring, { level: "error" }).events.map((e) => e.event)).toEqual(["other"]);
    expect(eventsAnswer(ring, { limit: "1" }).events.map((e) => e.event)).toEqual(["other"]);
    expect(eventsAnswer(ring, {}, (e) => e.profile === null).events).toHaveLength(1);
    for (const q of [{ level: "info" }, { level: "loud" }, { limit: "0" }, { limit: "x" }])
      expect(() => eventsAnswer(ring, q), JSON.stringify(q)).toThrow(
        expect.objectContaining({ code: "HEARTH_BAD_REQUEST" }),
      );
    expect(() => parseLevel("verbose")).toThrow(expect.objectContaining({ code: "HEARTH_USAGE" }));
  });
});
