import { spawn } from "node:child_process";
import { ERROR_CODES, HearthError, type HearthErrorCode } from "../errors.js";
import { builtFile } from "../files/built.js";

/** The CLI of this very build (dist/cli/main.js). */
const CLI = builtFile("cli/main.js");

export interface ChildResult {
  code: number | null;
  json: unknown;
  stderr: string;
}

/**
 * Run `hearth --json <args>` as a child process: doctor (a quick_check over
 * the whole file) and backup (copy and quick_check) take as long as the store is
 * big, so they run off the dashboard's event loop, in their own process
 * with their own connections, exactly as an operator's command would.
 */
export function runHearth(
  home: string,
  profile: string,
  args: string[],
  timeoutMs = 10 * 60_000,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, "--home", home, "--profile", profile, "--json", ...args],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, HEARTH_PROCESS_KIND: "" },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, json: parse(stdout) ?? parse(stderr), stderr });
    });
  });
}

/** The HearthError a failed child reported (its --json error body), or a generic one. */
export function childError(what: string, result: ChildResult): HearthError {
  const body = (result.json as { error?: { code?: string; message?: string; hint?: string } })
    ?.error;
  if (body?.code && body.message && body.code in ERROR_CODES) {
    return new HearthError(
      body.code as HearthErrorCode,
      body.message,
      body.hint ? { hint: body.hint } : {},
    );
  }
  return new HearthError("HEARTH_INTERNAL", `${what} failed (exit ${result.code ?? "signal"})`);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
