import { printable } from "../printable.js";
import { levelName } from "./levels.js";
import type { LogEvent } from "./ring.js";

/** Fields the head of a pretty line shows; the rest follow as key=value. */
const HEAD = new Set(["level", "time", "pid", "proc", "event", "msg", "hostname", "v"]);
const COLORS: Record<string, string> = {
  trace: "90",
  debug: "36",
  info: "32",
  warn: "33",
  error: "31",
  fatal: "35",
};

/**
 * One log event for a person at a terminal, pino-pretty-like: local time,
 * level name, process and pid, event, message, then the other fields as
 * key=value (objects as JSON). Every part is escaped (printable): a log
 * line never drives the terminal.
 */
export function prettyLine(e: LogEvent, options: { color?: boolean } = {}): string {
  const d = new Date(e.time);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const time = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  const name = levelName(e.level);
  const label = name.toUpperCase().padEnd(5);
  const who = `${typeof e.proc === "string" ? e.proc : "?"}[${String(e.pid ?? "?")}]`;
  const rest = Object.entries(e)
    .filter(([k, v]) => !HEAD.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const parts = [who];
  if (typeof e.event === "string") parts.push(e.event);
  if (typeof e.msg === "string") parts.push(e.msg);
  const text = printable([...parts, ...rest].join(" "), { oneLine: true });
  const level = options.color ? `\x1b[${COLORS[name]}m${label}\x1b[0m` : label;
  return `${time} ${level} ${text}`;
}
