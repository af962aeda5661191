import { type ChildProcessWithoutNullStreams, type SpawnOptions, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { scope } from "./scope.js";

/**
 * The process harness every multi-process test uses. A `Child` is spawned,
 * read line by line, and waited for by what it prints (never by a sleep).
 * test/helpers/setup.ts kills whatever a test left running and, when the
 * test failed, prints what its children wrote to stderr.
 */

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Written to stdin, which is then closed. */
  input?: string;
}

/** Children of the running test, for the logs on failure; `live` for the cleanup. */
const live = new Set<Child>();
/** Children a file's beforeAll started: they live until its afterAll. */
const fileLive = new Set<Child>();
let ofThisTest: Child[] = [];

export class Child {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  readonly lines: string[] = [];
  stdout = "";
  stderr = "";
  /** Resolves on "close": every line the process printed has been read by then. */
  readonly exited: Promise<Exit>;
  private readonly waiters: { match: (line: string) => boolean; resolve: (l: string) => void }[] =
    [];
  private readonly listeners: ((line: string) => void)[] = [];

  constructor(
    readonly command: string,
    readonly args: string[],
    options: ChildOptions = {},
  ) {
    const spawnOptions: SpawnOptions = {
      env: { ...process.env, ...options.env },
      stdio: "pipe",
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    };
    this.child = spawn(command, args, spawnOptions) as ChildProcessWithoutNullStreams;
    this.pid = this.child.pid ?? -1;
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      this.stdout += `${line}\n`;
      this.lines.push(line);
      for (const listener of this.listeners) listener(line);
      for (const w of this.waiters.filter((w) => w.match(line))) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        live.delete(this);
        fileLive.delete(this);
        resolve({ code, signal });
      });
      // A spawn failure (ENOENT, EACCES) emits "error" and then "close".
      this.child.once("error", (err) => {
        this.stderr += `spawn failed: ${err.message}\n`;
      });
    });
    this.child.stdin.on("error", () => undefined); // writes to a process that already died
    if (options.input !== undefined) this.child.stdin.end(options.input);
    if (scope.inTest) live.add(this);
    else fileLive.add(this);
    ofThisTest.push(this);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Call `listener` with every stdout line from now on. */
  onLine(listener: (line: string) => void): void {
    this.listeners.push(listener);
  }

  /** The first stdout line (already printed or still to come) matching; rejects if the process exits first. */
  line(match: (line: string) => boolean, what = "the line"): Promise<string> {
    const seen = this.lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      this.waiters.push({ match, resolve });
      void this.exited.then((exit) =>
        reject(new Error(`${this.name} ${exitText(exit)} before ${what}\n${this.stderr}`)),
      );
    });
  }

  /** The first stdout line that parses as JSON and satisfies `match`, parsed. */
  async json<T = Record<string, unknown>>(match: (value: T) => boolean, what?: string): Promise<T> {
    const line = await this.line((l) => {
      const value = parseJson<T>(l);
      return value !== undefined && match(value);
    }, what);
    return JSON.parse(line) as T;
  }

  /** Write one line to stdin (JSON unless a string). */
  send(value: unknown): void {
    this.child.stdin.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`);
  }

  /** Send `signal` (unless it already exited) and wait for the exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  /** SIGTERM, then SIGKILL if it is still running after `graceMs`. */
  async stop(graceMs = 5_000): Promise<Exit> {
    if (this.running) this.child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), graceMs);
    });
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    return first === "late" ? this.kill("SIGKILL") : first;
  }

  get name(): string {
    const first = (this.args.find((a) => !a.startsWith("-")) ?? "").split("/").pop() ?? "";
    const script = first.length > 40 ? `${first.slice(0, 40)}…` : first;
    return `pid ${this.pid} (${this.command.split("/").pop()} ${script})`;
  }
}

/** Spawn a tracked child. */
export function spawnChild(command: string, args: string[], options: ChildOptions = {}): Child {
  return new Child(command, args, options);
}

/** `node <args>` as a tracked child. */
export function spawnNode(args: string[], options: ChildOptions = {}): Child {
  return new Child(process.execPath, args, options);
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = ApiJson>(): T;
}

// biome-ignore lint/suspicious/noExplicitAny: CLI output is checked field by field
type ApiJson = any;

/** Run a command to its exit and collect its output. */
export async function run(
  command: string,
  args: string[],
  options: ChildOptions = {},
): Promise<RunResult> {
  const c = new Child(command, args, options);
  if (options.input === undefined) c.child.stdin.end();
  const { code, signal } = await c.exited;
  const stdout = c.stdout;
  return {
    code,
    signal,
    stdout,
    stderr: c.stderr,
    json: <T>() => JSON.parse(stdout) as T,
  };
}

/** The JSON a fixture printed on its line `<name> <json>`, or null when it printed none. */
export function printedJson<T = ApiJson>(stdout: string, name: string): T | null {
  const line = stdout.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : (JSON.parse(line.slice(name.length + 1)) as T);
}

/** Kill every tracked child still running and wait for each (setup.ts calls it after each test). */
export async function killLeftovers(): Promise<void> {
  await Promise.all([...live].map((c) => c.kill("SIGKILL")));
}

/** Kill the children a file's beforeAll started (setup.ts, after the file). */
export async function killFileChildren(): Promise<void> {
  await Promise.all([...fileLive].map((c) => c.kill("SIGKILL")));
}

/** Forget the previous test's children (setup.ts, before each test). */
export function newTest(): void {
  ofThisTest = [];
}

/** What the running test's children printed to stderr, for a failed test. */
export function logsOfThisTest(maxChars = 4_000): string {
  return ofThisTest
    .filter((c) => c.stderr.trim() !== "")
    .map((c) => {
      const tail = c.stderr.length > maxChars ? `…${c.stderr.slice(-maxChars)}` : c.stderr;
      const exit = c.running
        ? "still running"
        : exitText({ code: c.child.exitCode, signal: c.child.signalCode });
      return `--- ${c.name}, ${exit}: stderr ---\n${tail.trimEnd()}`;
    })
    .join("\n");
}

/** Poll a real condition (never a fixed sleep) until it holds, failing after `ms`. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether a process with this pid exists (it may be a zombie): kill(pid, 0) succeeds. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function exitText({ code, signal }: Exit): string {
  return signal ? `killed by ${signal}` : `exited ${code}`;
}

function parseJson<T>(line: string): T | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
}

/**
 * SIGKILL `pid` and wait, without yielding to the event loop, until the
 * kernel has dropped its locks (it is a zombie or gone): for test hooks that
 * must make a holder vanish at one precise instant of synchronous code.
 */
export function killAndWaitForExit(pid: number): void {
  process.kill(pid, "SIGKILL");
  for (;;) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
    } catch {
      return;
    }
    if (state === "Z" || state === "X") return;
  }
}
