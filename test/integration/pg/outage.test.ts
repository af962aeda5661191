/**
 * A PostgreSQL outage as HTTP clients and load balancers see it (H3): a
 * real gateway and a real dashboard whose store.url goes through a TCP
 * proxy the test takes down and brings back. While the server is gone,
 * requests are 503 HEARTH_PG_UNAVAILABLE with Retry-After (never a 500),
 * /v1/health stays 200 (liveness) and /v1/ready is 503 with the reason;
 * once the server is back, both are 200 and writes go through again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import {
  type ApiBody,
  type GatewayChild,
  startGateway,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";
import { startTcpProxy, type TcpProxy } from "../../helpers/tcp-proxy.js";

const running: GatewayChild[] = [];
const proxies: TcpProxy[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
  await stopDashboards();
  for (const p of proxies.splice(0)) await p.close();
});

async function homeBehindProxy(): Promise<{ home: string; proxy: TcpProxy }> {
  const url = new URL(await freshPgDatabase());
  const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  proxies.push(proxy);
  const home = tempHome();
  writeConfig(home, { store: { url: proxy.via(url.toString()) } });
  return { home, proxy };
}

async function get(url: string) {
  const res = await fetch(url);
  const body: ApiBody = await res.json();
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

describe.skipIf(!pgEnabled)("a PostgreSQL outage over HTTP", () => {
  it("the gateway answers 503 + Retry-After, is live but not ready, and recovers by itself", async () => {
    const { home, proxy } = await homeBehindProxy();
    const gw = await startGateway(home);
    running.push(gw);
    const message = (clientId: string) =>
      gw.post({ platform: "t", chat: "c", content: `hello ${clientId}`, clientId });

    expect((await message("before")).status).toBe(200);
    const ready = await get(gw.url("/v1/ready"));
    expect(ready).toMatchObject({ status: 200, body: { status: "ready", reasons: [] } });

    await proxy.down();
    const refused = await fetch(gw.url("/v1/messages"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ platform: "t", chat: "c", content: "down", clientId: "down-1" }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      "HEARTH_PG_UNAVAILABLE",
    );
    // A stream that could not store its message starts as no stream: the same 503.
    const stream = await fetch(gw.url("/v1/messages"), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ platform: "t", chat: "c", content: "down", clientId: "down-2" }),
    });
    expect(stream.status).toBe(503);
    expect(stream.headers.get("retry-after")).toBe("5");
    expect(((await stream.json()) as { error: { code: string } }).error.code).toBe(
      "HEARTH_PG_UNAVAILABLE",
    );

    let notReady = await get(gw.url("/v1/ready"));
    await until("/v1/ready to say not ready", async () => {
      notReady = await get(gw.url("/v1/ready"));
      return notReady.status !== 200;
    });
    expect(notReady.status).toBe(503);
    expect(notReady.retryAfter).toBe("5");
    expect(notReady.body.status).toBe("not ready");
    expect(notReady.body.reasons).toContainEqual(
      expect.objectContaining({ code: "HEARTH_PG_UNAVAILABLE", profile: "default" }),
    );
    expect(JSON.stringify(notReady.body)).not.toContain(String(proxy.port));
    const live = await get(gw.url("/v1/health"));
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({
      status: "ok",
      ready: false,
      stores: [{ profile: "default", backend: "postgres", reachable: false }],
    });

    await proxy.up();
    await until("/v1/ready to say ready again", async () => {
      return (await get(gw.url("/v1/ready"))).status === 200;
    });
    expect(await get(gw.url("/v1/health"))).toMatchObject({
      status: 200,
      body: { status: "ok", ready: true },
    });
    expect((await message("after")).status).toBe(200);
  });

  it("the dashboard answers 503 + Retry-After for its API and on /v1/ready while the server is gone", async () => {
    const { home, proxy } = await homeBehindProxy();
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    expect((await browser.api("GET", "/api/sessions?limit=5")).status).toBe(200);
    expect((await get(dash.url("/v1/ready"))).status).toBe(200);

    await proxy.down();
    const list = await browser.api("GET", "/api/sessions?limit=5");
    expect(list.status).toBe(503);
    expect(list.headers.get("retry-after")).toBe("5");
    expect(list.body.error.code).toBe("HEARTH_PG_UNAVAILABLE");
    let notReady = await get(dash.url("/v1/ready"));
    await until("the dashboard's /v1/ready to say not ready", async () => {
      notReady = await get(dash.url("/v1/ready"));
      return notReady.status !== 200;
    });
    expect(notReady).toMatchObject({
      status: 503,
      retryAfter: "5",
      body: { status: "not ready", reasons: [{ code: "HEARTH_PG_UNAVAILABLE" }] },
    });
    // Anonymous: no profile names.
    expect(notReady.body.reasons[0].profile).toBeUndefined();
    expect((await get(dash.url("/v1/health"))).status).toBe(200);

    await proxy.up();
    await until("the dashboard's /v1/ready to say ready again", async () => {
      return (await get(dash.url("/v1/ready"))).status === 200;
    });
    expect((await browser.api("GET", "/api/sessions?limit=5")).status).toBe(200);
  });
});
