import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import {
  type Browser,
  type DashboardChild,
  getWithHost,
  spawnDashboard,
  startDashboard,
  stopDashboards,
} from "../../helpers/dashboard.js";
import { withStore, writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";

/**
 * A home with one session and a dashboard on it. The session is written
 * through the store: no test here talks to a gateway (one started here to
 * post it cost a process start per test).
 */
async function setup() {
  const home = tempHome();
  const store = await openStore({ home });
  let sid: string;
  try {
    sid = (await store.sessions.create({ source: "web", chatKey: "1" })).id;
    await store.messages.append(sid, { role: "user", content: "hello" });
  } finally {
    await store.close();
  }
  const dash = await startDashboard(home);
  return { home, dash, sid };
}

const titleOf = (home: string, sid: string) =>
  withStore(home, async (s) => (await s.sessions.get(sid))?.title ?? null);

describe("dashboard security", () => {
  // Each of these checks answers of a running dashboard (a request, its headers, a refused
  // change): one home, dashboard and logged-in session serve them all (a dashboard start per
  // test cost about 1.5 s each). The one-time login link, the allowed hosts and the refused
  // listen each need a dashboard of their own (below).
  describe("one home, dashboard and session", () => {
    let one: { home: string; dash: DashboardChild; sid: string; browser: Browser };
    beforeAll(async () => {
      const { home, dash, sid } = await setup();
      one = { home, dash, sid, browser: await dash.logIn() };
    });
    afterAll(async () => {
      await stopDashboards();
      cleanupHomes();
    });

    it("answers 401 on every API route without a session and redirects pages to /login", async () => {
      const { dash, sid } = one;
      for (const path of [
        "/api/me",
        "/api/sessions",
        `/api/sessions/default/${sid}`,
        "/api/search?q=hello",
        "/api/health",
        "/api/events",
      ]) {
        const res = await fetch(dash.url(path));
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          "HEARTH_UNAUTHORIZED",
        );
      }
      // A forged cookie is no session either.
      const forged = await fetch(dash.url("/api/sessions"), {
        headers: { cookie: "hearth_dashboard_x=abc" },
      });
      expect(forged.status).toBe(401);
      for (const path of ["/", "/sessions", `/sessions/default/${sid}`, "/health"]) {
        const res = await fetch(dash.url(path), { redirect: "manual" });
        expect({ path, status: res.status, location: res.headers.get("location") }).toEqual({
          path,
          status: 302,
          location: "/login",
        });
      }
      const login = await fetch(dash.url("/login"));
      expect(login.status).toBe(200);
      expect(await login.text()).toContain("hearth dashboard link");
    });

    it("refuses a change without the CSRF token, without an Origin or from a foreign Origin (403, nothing written)", async () => {
      const { home, sid, browser } = one;
      const attempts = [
        { csrf: false },
        { origin: null },
        { origin: "http://evil.example" },
        { origin: "null" },
        { headers: { "x-csrf-token": "wrong" }, csrf: false },
      ] as const;
      for (const options of attempts) {
        const res = await browser.api("PATCH", `/api/sessions/default/${sid}`, {
          body: { title: "pwned" },
          ...options,
        });
        expect({ options, status: res.status, code: res.body.error?.code }).toEqual({
          options,
          status: 403,
          code: "HEARTH_CSRF_REJECTED",
        });
      }
      const del = await browser.api("DELETE", `/api/sessions/default/${sid}`, {
        origin: "http://evil.example",
      });
      expect(del.status).toBe(403);
      const bulk = await browser.api("POST", "/api/sessions/bulk", {
        body: { action: "archive", sessions: [{ profile: "default", id: sid }] },
        csrf: false,
      });
      expect(bulk.status).toBe(403);
      await withStore(home, async (s) => {
        const session = await s.sessions.get(sid);
        // Untitled, or titled "hello" from its first exchange (issue 47): never "pwned".
        expect(session).toMatchObject({ archived: false });
        expect([null, "hello"]).toContain(session?.title);
      });
      // The same change from the dashboard's own page, with its token, goes through.
      const ok = await browser.api("PATCH", `/api/sessions/default/${sid}`, {
        body: { title: "mine" },
      });
      expect(ok.status).toBe(200);
      expect(await titleOf(home, sid)).toBe("mine");
    });

    it("refuses a foreign Host (DNS rebinding) on pages, login and API alike", async () => {
      const { dash, browser } = one;
      const port = new URL(dash.address).port;
      for (const path of ["/login", "/", "/api/sessions"]) {
        const res = await getWithHost(dash.address, path, `rebind.evil.example:${port}`, {
          cookie: browser.cookie,
        });
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expect(JSON.parse(res.body).error.code).toBe("HEARTH_HOST_NOT_ALLOWED");
      }
      const fine = await getWithHost(dash.address, "/api/sessions", `localhost:${port}`, {
        cookie: browser.cookie,
      });
      expect(fine.status).toBe(200);
    });

    it("sends CSP without inline script, no framing, nosniff and no referrer on pages and API", async () => {
      const { dash, browser } = one;
      for (const res of [
        await fetch(dash.url("/login")),
        await fetch(dash.url("/sessions"), { headers: { cookie: browser.cookie } }),
        await fetch(dash.url("/api/sessions"), { headers: { cookie: browser.cookie } }),
        await fetch(dash.url("/api/sessions")),
      ]) {
        const csp = res.headers.get("content-security-policy") ?? "";
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toContain("unsafe-inline");
        expect(csp).not.toContain("unsafe-eval");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(res.headers.get("x-frame-options")).toBe("DENY");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      }
      const page = await (
        await fetch(dash.url("/sessions"), { headers: { cookie: browser.cookie } })
      ).text();
      // Every script is a file of the bundle: none inline.
      expect(page).toMatch(
        /<script type="module" crossorigin src="\/assets\/[^"]+\.js"><\/script>/,
      );
      expect(page.match(/<script[^>]*>[^<]+<\/script>/g)).toBeNull();
    });

    it("serves the bundle brotli- or gzip-compressed as the browser accepts, with Vary", async () => {
      const { dash, browser } = one;
      const host = new URL(dash.address).host;
      const page = await getWithHost(dash.address, "/sessions", host, { cookie: browser.cookie });
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)![1]!;
      const plain = await getWithHost(dash.address, script, host);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers.vary).toMatch(/accept-encoding/i);
      const br = await getWithHost(dash.address, script, host, { "accept-encoding": "gzip, br" });
      expect(br.headers["content-encoding"]).toBe("br");
      expect(br.headers.vary).toMatch(/accept-encoding/i);
      expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true);
      expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2);
      const gz = await getWithHost(dash.address, script, host, {
        "accept-encoding": "gzip, br;q=0",
      });
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(gz.bytes).equals(plain.bytes)).toBe(true);
      // The page itself too (behind the login).
      const html = await getWithHost(dash.address, "/sessions", host, {
        cookie: browser.cookie,
        "accept-encoding": "gzip",
      });
      expect(html.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(html.bytes).toString()).toContain("/assets/");
    });

    it("hearth dashboard link prints a fresh one-time link to the running dashboard", async () => {
      const { home, dash } = one;
      const { spawnSync } = await import("node:child_process");
      const { fileURLToPath } = await import("node:url");
      const cli = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
      const out = spawnSync(
        process.execPath,
        [cli, "--home", home, "--json", "dashboard", "link"],
        {
          encoding: "utf8",
        },
      );
      expect(out.status).toBe(0);
      const { link, running } = JSON.parse(out.stdout) as { link: string; running: boolean };
      expect(running).toBe(true);
      expect(link.startsWith(`${dash.address}/login?token=`)).toBe(true);
      const browser = await dash.logIn(link);
      expect((await browser.api("GET", "/api/me")).status).toBe(200);
    });
  });

  describe("a dashboard of their own", () => {
    afterEach(async () => {
      await stopDashboards();
      cleanupHomes();
    });

    it("a login link works once and sets an HttpOnly, SameSite=Strict cookie", async () => {
      const { dash } = await setup();
      const res = await fetch(dash.login, { redirect: "manual" });
      expect(res.status).toBe(303);
      const cookie = res.headers.get("set-cookie") ?? "";
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
      const again = await fetch(dash.login, { redirect: "manual" });
      expect(again.status).toBe(401);
      expect(again.headers.get("set-cookie")).toBeNull();
    });

    it("answers for a name listed in dashboard.allowedHosts", async () => {
      const home = tempHome();
      writeConfig(home, { dashboard: { allowedHosts: ["hearth.lan"] } });
      const dash = await startDashboard(home);
      const port = new URL(dash.address).port;
      expect((await getWithHost(dash.address, "/login", `hearth.lan:${port}`)).status).toBe(200);
      expect((await getWithHost(dash.address, "/login", `other.lan:${port}`)).status).toBe(403);
    });

    it("refuses to listen beyond loopback without TLS and says how to do it safely", async () => {
      const home = tempHome();
      writeConfig(home, { dashboard: { host: "0.0.0.0" } });
      const dash = spawnDashboard(home);
      await expect(dash.ready).rejects.toThrow(/HEARTH|TLS/);
      const { code } = await dash.exited;
      expect(code).not.toBe(0);
      expect(dash.stderr).toContain("without TLS");
      expect(dash.stderr).toContain("ssh -L");
      expect(dash.events).toEqual([]);
    });
  });
});
