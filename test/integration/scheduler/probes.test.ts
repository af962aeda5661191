/**
 * The scheduler's /v1/health and /v1/ready (H3), on a real `hearth
 * scheduler run`: liveness stays 200 whatever happens to the store;
 * readiness is 503 with a coded reason while the store's disk is full,
 * while a structural operation holds the store, and (PostgreSQL) while the
 * server is gone, and 200 again by itself after each. GET /v1/events
 * shows its recent warn/error log events.
 */

import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { spawnNode, until } from "../../helpers/process.js";
import { startScheduler } from "../../helpers/scheduler.js";
import { fillDisk, mountSmallDisk, unmountSmallDisks } from "../../helpers/small-disk.js";
import { startTcpProxy, type TcpProxy } from "../../helpers/tcp-proxy.js";

const SURGEON = fileURLToPath(new URL("../../fixtures/surgeon-holder.mjs", import.meta.url));
const proxies: TcpProxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
  unmountSmallDisks();
});

async function get(url: string) {
  const res = await fetch(url);
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body read by the assertions
  const body: any = await res.json();
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

const reasonCodes = (r: { body: { reasons: { code: string }[] } }) =>
  r.body.reasons.map((x) => x.code);

describe("the scheduler's probes", () => {
  it("is not ready while its disk is full or a structural operation holds the store, and live throughout", async (ctx) => {
    const home = join(tempHome(), "home");
    mountSmallDisk(home, "24m", ctx);
    writeConfig(home, { scheduler: { port: 0, jobs: [] } });
    const s = await startScheduler(home);
    expect(await get(`${s.address}/v1/health`)).toMatchObject({
      status: 200,
      body: { status: "ok", pid: s.pid },
    });
    expect(await get(`${s.address}/v1/ready`)).toMatchObject({
      status: 200,
      body: { status: "ready", reasons: [] },
    });

    const filler = fillDisk(home);
    let full = await get(`${s.address}/v1/ready`);
    await until("/v1/ready to say not ready", async () => {
      full = await get(`${s.address}/v1/ready`);
      return full.status === 503;
    });
    expect(full.retryAfter).toBe("1");
    expect(reasonCodes(full)).toEqual(["HEARTH_NO_SPACE"]);
    expect(full.body.reasons[0].profile).toBe("default");
    expect((await get(`${s.address}/v1/health`)).status).toBe(200);
    rmSync(filler);
    await until("ready again", async () => (await get(`${s.address}/v1/ready`)).status === 200);

    const surgeon = spawnNode([SURGEON, join(home, "state.db")]);
    await surgeon.line((l) => l === "ready");
    let held = await get(`${s.address}/v1/ready`);
    await until("/v1/ready to see the structural operation", async () => {
      held = await get(`${s.address}/v1/ready`);
      return held.status === 503;
    });
    expect(reasonCodes(held)).toEqual(["HEARTH_MAINTENANCE_RUNNING"]);
    await surgeon.kill("SIGKILL");
    await until("ready again", async () => (await get(`${s.address}/v1/ready`)).status === 200);
    expect(await s.process.stop(30_000)).toEqual({ code: 0, signal: null });
  });

  it("GET /v1/events shows its recent warn and error events, and refuses a bad level", async () => {
    const home = tempHome();
    writeConfig(home, { scheduler: { port: 0, jobs: [] } });
    const s = await startScheduler(home);
    expect(await get(`${s.address}/v1/events`)).toEqual({
      status: 200,
      retryAfter: null,
      body: { events: [] },
    });
    writeConfig(home, { scheduler: { port: 0, jobs: [], nope: 1 } });
    await until("config.invalid logged", () => s.logs("config.invalid").length > 0);
    const events = await get(`${s.address}/v1/events?level=error`);
    expect(events.body.events).toEqual([
      expect.objectContaining({
        level: 50,
        levelName: "error",
        proc: "scheduler",
        pid: s.pid,
        event: "config.invalid",
        msg: "configuration not reloaded; the jobs go on as they were",
      }),
    ]);
    const bad = await get(`${s.address}/v1/events?level=loud`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("HEARTH_BAD_REQUEST");
    expect(await s.process.stop(30_000)).toEqual({ code: 0, signal: null });
  });

  it.skipIf(!pgEnabled)(
    "on PostgreSQL, is not ready while the server is gone, and ready again after",
    async () => {
      const url = new URL(await freshPgDatabase());
      const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
      proxies.push(proxy);
      const home = tempHome();
      writeConfig(home, {
        store: { url: proxy.via(url.toString()) },
        scheduler: { port: 0, jobs: [] },
      });
      const s = await startScheduler(home);
      expect((await get(`${s.address}/v1/ready`)).status).toBe(200);
      await proxy.down();
      let down = await get(`${s.address}/v1/ready`);
      await until("/v1/ready to say not ready", async () => {
        down = await get(`${s.address}/v1/ready`);
        return down.status === 503;
      });
      expect(down.retryAfter).toBe("5");
      expect(reasonCodes(down)).toEqual(["HEARTH_PG_UNAVAILABLE"]);
      expect((await get(`${s.address}/v1/health`)).status).toBe(200);
      await proxy.up();
      await until(
        "ready again",
        async () => (await get(`${s.address}/v1/ready`)).status === 200,
        30_000,
      );
      expect(await s.process.stop(30_000)).toEqual({ code: 0, signal: null });
    },
  );
});
