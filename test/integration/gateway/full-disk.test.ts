import { mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  answerJson,
  closeFakes,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { fillDisk, mountSmallDisk, unmountSmallDisks } from "../../helpers/small-disk.js";

afterEach(async () => {
  await closeFakes();
  unmountSmallDisks();
});

describe("a full disk is an operating condition, not a bug (issue 14)", () => {
  it("answers 507 HEARTH_NO_SPACE with the free space, loses nothing acknowledged, and resumes once space is freed", async (ctx) => {
    const mnt = join(dirname(tempHome()), "small");
    mountSmallDisk(mnt, "4m", ctx);
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
    // The write's own words, never the backup admission's (issue: Recovery 4.2).
    expect(full?.body.error.details).toEqual({ situation: "write" });
    expect(full?.body.error.message).toContain("this write was not stored");
    expect(full?.body.error.message).toContain("writes resume by themselves");
    expect(full?.body.error.message).not.toContain("copy");
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

  it("releases a turn's lease once space is freed, when the disk was full as the reply was stored", async (ctx) => {
    const mnt = join(dirname(tempHome()), "small-lease");
    mountSmallDisk(mnt, "4m", ctx);
    // The first reply waits until the disk is full; the ones after answer at once.
    let answerFirst: () => void = () => undefined;
    const firstMayAnswer = new Promise<void>((r) => {
      answerFirst = r;
    });
    const fake = await startFakeOpenAi(async (_req, res) => {
      if (fake.requests.length === 1) await firstMayAnswer;
      answerJson(res, "r".repeat(20_000));
    });
    const home = join(mnt, "home");
    mkdirSync(home, { mode: 0o700 });
    // A lease far longer than the test: only a release can free the session.
    writeConfig(home, {
      gateway: {
        leaseMs: 3_600_000,
        turnWaitMs: 15_000,
        responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m", stream: false },
      },
    });
    const gw = await startGateway(home, { env: { OPENAI_API_KEY: undefined } });
    const first = gw.post({ platform: "t", chat: "lease", content: "first", clientId: "l1" });
    await until("the responder has the first turn", () => fake.requests.length === 1);
    const filler = fillDisk(mnt);
    answerFirst();
    // The reply and the release of the lease could not be stored.
    expect((await first).status).toBe(507);
    await until("the failed release is logged", () =>
      gw.stderr.includes("turn.lease_release_failed"),
    );
    rmSync(filler);
    // The session's next turn goes through; without the background release
    // it would wait out the lease (an hour) and get 409 HEARTH_TURN_BUSY.
    const next = await gw.post({ platform: "t", chat: "lease", content: "second", clientId: "l2" });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
  }, 60_000);
});
