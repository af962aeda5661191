// Child processes of the torture run: spawned, read line by line, waited
// for by what they print (never a sleep), killed by pid only.
//
// None outlives the runner, even a SIGKILLed one: every child gets
// HEARTH_SUPERVISOR_PID (the gateway and the dashboard stop once their
// parent is gone, src/cli/daemon.ts; the store worker fixture does the
// same), and each runs in a process group of its own, so a child that is
// SIGSTOPped when the runner dies is in an orphaned group with a stopped
// member, which the kernel sends SIGHUP and SIGCONT.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** Every child still running, so the runner can end exactly what it started. */
export const running = new Set();
/** Called with (proc, chunk) for every child's stderr (the runner looks for loud reports). */
export const stderrWatchers = new Set();
/** Where the long-lived children's stderr (their JSON logs) is kept, when set. */
export const logs = { dir: undefined, names: new Set(["gateway", "dashboard", "start", "acp"]) };

export class Proc {
  constructor(args, { env = {}, name = "child" } = {}) {
    this.name = name;
    this.child = spawn(process.execPath, args, {
      env: { ...process.env, HEARTH_SUPERVISOR_PID: String(process.pid), ...env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.pid = this.child.pid;
    this.lines = [];
    this.stderr = "";
    this.waiters = [];
    this.stopped = false;
    running.add(this);
    this.child.stdin.on("error", () => undefined);
    this.child.stderr.setEncoding("utf8").on("data", (d) => {
      this.stderr = (this.stderr + d).slice(-20_000);
      this.onStderr?.(d);
      for (const w of stderrWatchers) w(this, d);
      if (logs.dir && logs.names.has(this.name))
        try {
          appendFileSync(`${logs.dir}/${this.name}-${this.pid}.log`, d);
        } catch {
          // the log is a convenience (the disk may be full)
        }
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      this.lines.push(line);
      if (this.lines.length > 200) this.lines.shift();
      for (const w of this.waiters.filter((w) => w.match(line))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
      this.onLine?.(line);
    });
    this.exited = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      });
      this.child.once("error", (err) => {
        this.stderr += `spawn failed: ${err.message}\n`;
      });
    });
  }

  get alive() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The first stdout line matching, within `ms`; rejects on exit or timeout. */
  line(match, ms, what = "a line") {
    const seen = this.lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name} ${this.pid}: no ${what} within ${ms} ms`)),
        ms,
      );
      this.waiters.push({
        match,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
      void this.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(
          new Error(
            `${this.name} ${this.pid} exited (${signal ?? code}) before ${what}\n${this.stderr.slice(-2000)}`,
          ),
        );
      });
    });
  }

  json(match, ms, what) {
    return this.line(
      (l) => {
        if (!l.startsWith("{")) return false;
        try {
          return match(JSON.parse(l));
        } catch {
          return false;
        }
      },
      ms,
      what,
    ).then((l) => JSON.parse(l));
  }

  send(value) {
    this.child.stdin.write(`${JSON.stringify(value)}\n`);
  }

  signal(sig) {
    if (this.alive) this.child.kill(sig);
  }

  async kill(sig = "SIGKILL") {
    if (this.stopped) this.signal("SIGCONT");
    this.signal(sig);
    return this.exited;
  }
}

/** Run `node args` to its exit: code, signal, stdout, stderr. */
export async function runNode(args, { env = {}, ms = 120_000, input = "" } = {}) {
  const p = new Proc(args, { env, name: "cli" });
  p.child.stdin.end(input);
  let out = "";
  p.child.stdout.on("data", (d) => {
    out += d;
  });
  const timer = setTimeout(() => p.signal("SIGKILL"), ms);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  return { pid: p.pid, code, signal, stdout: out, stderr: p.stderr };
}
