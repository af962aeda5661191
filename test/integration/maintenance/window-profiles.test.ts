import { readdirSync, readlinkSync, statSync } from "node:fs";
import { expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const PROFILES = ["p0", "p1", "p2"];

/** Socket descriptors of a process, from /proc/<pid>/fd. */
function sockets(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) n++;
    } catch {
      // closed while we looked
    }
  }
  return n;
}

// One gateway takes park requests for all its profiles on one socket (one
// descriptor per process, not per profile): each profile's run/ directory
// holds a hard link to it, and a request names the profile it parks. A
// window on one profile parks that profile only; the others keep serving.
it("one park socket serves every profile of a gateway; a window parks only its own profile", async () => {
  const home = tempHome();
  const gw = await startGateway(home, { profiles: PROFILES });
  const links = PROFILES.map((p) => `${home}/profiles/${p}/run/park-${gw.pid}.sock`);
  const inodes = new Set(links.map((l) => statSync(l).ino));
  expect(inodes.size).toBe(1);
  // The HTTP listener, stdio and the park socket: not one more per profile.
  const sharedSockets = sockets(gw.pid);

  for (const [i, profile] of PROFILES.entries()) {
    const r = await runCli(["--profile", profile, "--json", "sessions", "optimize", "--window"], {
      home,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().window.parked).toEqual([gw.pid]);
    await until(`${profile} resumed`, () => gw.logEvents("window.resumed").length === i + 1);
    const parked = gw.logEvents("window.parked").map((e) => e.profile);
    expect(parked).toEqual(PROFILES.slice(0, i + 1));
    const sent = await gw.post({ profile, platform: "t", chat: "c", content: `after ${profile}` });
    expect(sent.status).toBe(200);
  }
  expect(sockets(gw.pid)).toBeLessThanOrEqual(sharedSockets + 1);
  await gw.kill("SIGTERM");
  for (const link of links) expect(() => statSync(link)).toThrow();
});
