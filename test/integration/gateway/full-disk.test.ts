import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startGateway, withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const mounts: string[] = [];
afterEach(() => {
  for (const mnt of mounts.splice(0)) execFileSync("umount", ["-l", mnt], { stdio: "pipe" });
});

describe("a full disk is an operating condition, not a bug (issue 14)", () => {
  it("answers 507 HEARTH_NO_SPACE with the free space, loses nothing acknowledged, and resumes once space is freed", async (ctx) => {
    const mnt = join(dirname(tempHome()), "small");
    mkdirSync(mnt);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", mnt], {
        stdio: "pipe",
      });
    } catch (err) {
      ctx.skip(`cannot mount a 4 MiB tmpfs (needs root or CAP_SYS_ADMIN): ${String(err)}`);
    }
    mounts.push(mnt);
    const home = join(mnt, "home");
    const gw = await startGateway(home);
    const acked: string[] = [];
    const send = async (i: number) => {
      const clientId = `m${i}`;
      const r = await gw.post({
        platform: "t",
        chat: "full",
        content: `${i} ${"z".repeat(30_000)}`,
        clientId,
      });
      if (r.status === 200) acked.push(clientId);
      return r;
    };
    expect((await send(0)).status).toBe(200);
    // Fill what is left, but for a little.
    const filler = join(mnt, "filler");
    const { bavail, bsize } = statfsSync(mnt);
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 48 * 1024)));

    let full: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 1; i < 200 && !full; i++) {
      const r = await send(i);
      if (r.status !== 200) full = r;
    }
    expect(full?.status).toBe(507);
    expect(full?.body.error.code).toBe("HEARTH_NO_SPACE");
    // HTTP clients get the code; the path and the free space go to the log.
    await until("the full disk is logged with the free space", () =>
      /is full \(\d+ bytes free\)/.test(gw.stderr),
    );

    rmSync(filler);
    const after = await send(1000);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    const stored = await withStore(home, async (s) => {
      const [session] = (await s.sessions.list()).items;
      return new Set((await s.messages.load(session!.id)).map((m) => m.clientId));
    });
    for (const id of acked) expect(stored.has(id), id).toBe(true);
    await gw.kill("SIGKILL");
    const db = new Database(join(home, "state.db"), { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });
});
