// Reading an strace -f -y log of a hearth process: which thread made which
// call on which file, in completion order. strace is installed by .ci/run.

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
