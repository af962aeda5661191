// Reading an strace -f -y log of a hearth process: which thread made which
// call on which file, in completion order. strace is installed by .ci/run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { run } from "./process.js";

export interface Call {
  tid: number;
  name: string;
  file: string;
  /** The line that completes the call (its own line, or the "resumed" one). */
  done: number;
  text: string;
}

/** The traced calls in completion order, joining strace's unfinished/resumed halves. */
export function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, { name: string; file: string; begun: string }>();
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    const m = /^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\((\d+)<([^>]*)>)/.exec(line);
    if (!m) return;
    const tid = Number(m[1]);
    if (m[2]) {
      const started = open.get(`${tid}:${m[2]}`);
      open.delete(`${tid}:${m[2]}`);
      // The text is both halves: the arguments (an ack's bytes) are on the first.
      if (started && / = 0$|= \d+$/.test(line))
        calls.push({
          tid,
          name: started.name,
          file: started.file,
          done: index,
          text: `${started.begun} ${line}`,
        });
      return;
    }
    const call = { name: m[3]!, file: m[5]! };
    if (line.includes("<unfinished ...>"))
      open.set(`${tid}:${call.name}`, { ...call, begun: line });
    else if (!/ = -1 /.test(line)) calls.push({ tid, ...call, done: index, text: line });
  });
  return calls;
}

/**
 * Run `node <fixture> <json of arg>` under strace (-f -y, the given
 * syscalls and write), expect it to end well, and return its output, its
 * traced calls, its "ack N" writes (one per acknowledged write, in order)
 * and the id of the thread that wrote them: the event loop's.
 */
export async function traceFixture(
  fixture: string,
  arg: { home: string; count: number } & Record<string, unknown>,
  syscalls: string,
  env?: NodeJS.ProcessEnv,
) {
  const out = join(arg.home, "..", "trace.txt");
  const result = await run(
    "strace",
    [
      ...["-f", "-y", "-s", "12", "-e", `trace=write,${syscalls}`, "-o", out],
      ...[process.execPath, fixture, JSON.stringify(arg)],
    ],
    env ? { env: { ...process.env, ...env } } : undefined,
  );
  // Nothing on stderr but the failpoints a test armed (src/failpoints.ts).
  expect(result.stderr.replace(/^\{"event":"failpoint\.fired".*\n/gm, "")).toBe("");
  expect(result.code).toBe(0);
  const calls = parseTrace(readFileSync(out, "utf8"));
  const acks = calls.filter((c) => c.name === "write" && /"ack \d+/.test(c.text));
  expect(acks).toHaveLength(arg.count);
  return { result, calls, acks, main: acks[0]!.tid };
}
