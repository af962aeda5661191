/**
 * A PostgreSQL password at the command line: a warning when one was given
 * as an argument (every user of the machine reads it in `ps` and
 * /proc/<pid>/cmdline while the command runs), and the prompt that replaces
 * it on a terminal, echo off.
 */
import { hasPassword } from "../store/pg/password.js";

/**
 * A warning for each named option whose URL carries a password: printed on
 * stderr at once, or (`json`) returned for the report, so that --json
 * output stays one JSON document.
 */
export function warnPasswordOnCommandLine(
  options: Record<string, string | undefined>,
  json: boolean,
): string[] {
  const warnings: string[] = [];
  for (const [flag, value] of Object.entries(options)) {
    if (value === undefined || !/^postgres(ql)?:\/\//i.test(value) || !hasPassword(value)) continue;
    warnings.push(
      `the password in ${flag} is visible to other users of this machine while hearth runs (ps, /proc/<pid>/cmdline); leave it out and use PGPASSWORD, store.passwordFile or the prompt (docs/operations.md)`,
    );
  }
  if (!json) for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  return warnings;
}

/** Ask for the password of `url` on the terminal, without echo; undefined when stdin is not one. */
export function terminalPrompt(): ((url: string) => Promise<string>) | undefined {
  const input = process.stdin;
  if (!input.isTTY) return undefined;
  return (url) =>
    new Promise((resolve, reject) => {
      let answer = "";
      const done = (err?: Error) => {
        input.setRawMode(false);
        input.pause();
        input.off("data", onData);
        process.stderr.write("\n");
        if (err) reject(err);
        else resolve(answer);
      };
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString("utf8")) {
          if (ch === "\r" || ch === "\n") return done();
          if (ch === "\u0003") return done(new Error("interrupted at the password prompt"));
          if (ch === "\u007f" || ch === "\b") answer = answer.slice(0, -1);
          else answer += ch;
        }
      };
      // Echo off before the prompt shows: a password typed at once is never echoed.
      input.setRawMode(true);
      input.resume();
      input.on("data", onData);
      process.stderr.write(`password for ${url} (empty: none): `);
    });
}
