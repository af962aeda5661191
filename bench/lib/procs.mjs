// Child processes speaking JSON lines: the child prints {"ready":true} when
// it can take commands, reads one JSON command per stdin line and prints
// one JSON object per stdout line.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const live = new Set();

/** Start `bench/workers/<name>` with one JSON argument. */
export function startChild(name, arg) {
  const script = fileURLToPath(new URL(`../workers/${name}`, import.meta.url));
  return startProcess([script, JSON.stringify(arg)], { label: name });
}

/**
 * Start `node <args>` (env: the child's environment) and read its stdout as
 * JSON lines; the child is killed by killChildren() if still running.
 */
export function startProcess(args, { label, env = process.env }) {
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"], env });
  live.add(child);
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d.toString();
  });
  const seen = [];
  const waiters = [];
  createInterface({ input: child.stdout }).on("line", (text) => {
    let line;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    seen.push(line);
    for (const w of waiters.filter((w) => w.match(line))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal);
    }),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid,
    exited,
    stderr: () => stderr,
    /** The first line matching `match` (already printed or to come); rejects if the child exits first. */
    line(match) {
      const done = seen.find(match);
      if (done) return Promise.resolve(done);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        exited.then((code) => reject(new Error(`${label} exited (${code}) early\n${stderr}`)));
      });
    },
    send(value) {
      child.stdin.write(`${JSON.stringify(value)}\n`);
    },
    /** Ask the child to exit and wait for it. */
    async stop() {
      if (running()) child.stdin.end(`${JSON.stringify({ op: "exit" })}\n`);
      await exited;
    },
    /** Send a signal (SIGTERM: a gateway drains and exits) and wait for the exit; resolves with the code or signal. */
    async signal(name) {
      if (running()) child.kill(name);
      return exited;
    },
  };
}

/** Kill every child still running (on failure paths). */
export async function killChildren() {
  const waits = [];
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) {
      waits.push(new Promise((resolve) => child.once("exit", resolve)));
      child.kill("SIGKILL");
    }
  }
  await Promise.all(waits);
}

/** The worker side: print a JSON line. */
export const emit = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

/**
 * The worker side: handle JSON commands from stdin with `handlers[op](args)`;
 * a command's `seq`, if any, is echoed in its answer.
 * {"op":"exit"} (or stdin closing) runs `handlers.close` and exits.
 */
export function serve(handlers) {
  let quitting = false;
  const quit = async () => {
    if (quitting) return;
    quitting = true;
    await handlers.close?.();
    process.exit(0);
  };
  const rl = createInterface({ input: process.stdin });
  rl.on("line", async (text) => {
    const { op, seq, ...args } = JSON.parse(text);
    if (op === "exit") return quit();
    const tag = seq === undefined ? { op } : { op, seq }; // seq: echoed, to match repeated ops
    try {
      emit({ ...tag, ok: true, result: await handlers[op](args) });
    } catch (err) {
      emit({ ...tag, ok: false, error: { code: err.code, message: err.message } });
    }
  });
  rl.on("close", quit);
  emit({ ready: true, pid: process.pid });
}
