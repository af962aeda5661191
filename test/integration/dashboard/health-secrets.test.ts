/**
 * The dashboard's health page lists who holds the store with their command
 * lines: a password on another process's command line
 * (`… --to postgres://u:pw@…`, `PGPASSWORD=…`) is shown masked, never in
 * clear, and `hearth ps` (text and JSON) masks it the same way.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";

const SECRET = "Hunter2-Dash-9f3";
const INDEX = fileURLToPath(new URL("../../../dist/index.js", import.meta.url));
const holders: ChildProcess[] = [];
afterEach(async () => {
  for (const c of holders.splice(0)) c.kill("SIGKILL");
  await stopDashboards();
  cleanupHomes();
});

/** A process holding the store as a writer, with passwords on its command line. */
async function holderWithSecrets(home: string): Promise<ChildProcess> {
  const script = `const { openStore } = await import(${JSON.stringify(INDEX)});
const store = await openStore({ home: ${JSON.stringify(home)} });
await store.sessions.create({});
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);`;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      script,
      "--",
      "migrate",
      "--to",
      `postgres://u:${SECRET}@db.example/hearth?password=${SECRET}`,
      `PGPASSWORD=${SECRET}`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
  });
  return child;
}

describe("command lines with passwords", () => {
  it("are masked on the dashboard's health page and in hearth ps", async () => {
    const home = tempHome();
    const holder = await holderWithSecrets(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const health = await browser.api("GET", "/api/health");
    expect(health.status).toBe(200);
    const shown = health.body.profiles[0].holders.find(
      (h: { pid: number }) => h.pid === holder.pid,
    );
    expect(shown.commandLine).toContain("--to postgres://u:***@db.example/hearth?password=***");
    expect(shown.commandLine).toContain("PGPASSWORD=***");
    expect(JSON.stringify(health.body)).not.toContain(SECRET);

    for (const args of [["ps"], ["--json", "ps"]]) {
      const ps = await runCli(args, { home });
      expect(ps.code, ps.stderr).toBe(0);
      expect(ps.stdout).toContain(String(holder.pid));
      expect(ps.stdout).toContain("postgres://u:***@db.example");
      expect(ps.stdout).not.toContain(SECRET);
    }
  });
});
