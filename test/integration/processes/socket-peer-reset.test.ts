/**
 * A hearth process that asks over a Unix socket (a maintenance window's
 * surgeon asking a gateway to park, a CLI command asking `hearth start`)
 * while the process it asks dies with its request unread: the kernel
 * resets the connection (ECONNRESET). The asker must refuse, coded, and go
 * on, not die with "Unhandled 'error' event": readline's Interface emits
 * its socket's error again on itself (src/process/lines.ts). Found by the
 * torture run (seed 59): `hearth repair --window` exited 1 with that stack
 * trace when a participant was killed -9 under it.
 *
 * The peer here is a server of the test's own that never reads (paused on
 * connect) and closes once the request has arrived: what a kill -9 before
 * the read does to the asker's socket.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";

const ASKER = fileURLToPath(new URL("../../fixtures/socket-asker.mjs", import.meta.url));

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A Unix socket at `path` whose connections are never read and are closed 200 ms after they open. */
async function resettingPeer(path: string): Promise<{ accepted: () => number }> {
  let accepted = 0;
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    accepted++;
    socket.on("error", () => undefined);
    setTimeout(() => socket.destroy(), 200);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  chmodSync(path, 0o600); // as hearth start's own (the control client refuses others)
  return { accepted: () => accepted };
}

async function ask(kind: "park" | "supervisor", target: string) {
  const child = spawn(process.execPath, [ASKER, kind, target], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stderr, answer: stdout.trim() ? JSON.parse(stdout.trim()) : undefined };
}

describe("a socket peer that dies with the request unread", () => {
  it("a surgeon asking to park: refused as HEARTH_STORE_HELD, the surgeon goes on", async () => {
    const path = join(tempHome(), "park.sock");
    mkdirSync(join(path, ".."), { recursive: true });
    const peer = await resettingPeer(path);
    const r = await ask("park", path);
    expect(peer.accepted()).toBe(1);
    expect(r.stderr).not.toContain("Unhandled 'error' event");
    expect(r.code).toBe(0);
    expect(r.answer).toMatchObject({ outcome: "rejected", code: "HEARTH_STORE_HELD" });
  });

  it("a CLI asking hearth start: refused as HEARTH_SUPERVISOR_LOST, the CLI goes on", async () => {
    const home = tempHome();
    mkdirSync(join(home, "run"), { recursive: true, mode: 0o700 });
    const peer = await resettingPeer(join(home, "run", "start.sock"));
    const r = await ask("supervisor", home);
    expect(peer.accepted()).toBe(1);
    expect(r.stderr).not.toContain("Unhandled 'error' event");
    expect(r.code).toBe(0);
    expect(r.answer).toMatchObject({ outcome: "rejected", code: "HEARTH_SUPERVISOR_LOST" });
  });
});
