import { mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { listReplica, segmentKey } from "../../../src/ops/replicate/layout.js";
import { restoreIntoNewHome } from "../../../src/ops/replicate/restore-from.js";
import { openTarget, targetConfig } from "../../../src/ops/replicate/target.js";
import type { Store } from "../../../src/store/api.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode, until } from "../../helpers/process.js";
import { replicaConfig, replicating, rows, s3Targets } from "../../helpers/replica.js";

// The S3 test of target-failures.test.ts once failed at restore with
// HEARTH_REPLICA_CORRUPT: a segment's bytes did not match the checksum in
// its name. s3rver answers a PUT before its file is written, so one killed
// then keeps a half-written object under the full name, and the shipper
// had counted it shipped. Here a proxy in front of a real s3rver cuts the
// object s3rver wrote in half before passing its 200 on: the shipper must
// not count it (a HEAD shows what landed), and a restore must not trust a
// half object that has an intact twin.

const S3RVER = fileURLToPath(new URL("../../fixtures/s3rver.mjs", import.meta.url));
process.env.AWS_ACCESS_KEY_ID = "S3RVER";
process.env.AWS_SECRET_ACCESS_KEY = "S3RVER";

const children: Child[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill("SIGKILL");
  for (const s of servers.splice(0)) s.close();
});

async function startS3rver(dir: string): Promise<number> {
  const child = spawnNode([S3RVER, dir, "0", "hearth"]);
  children.push(child);
  return (await child.json<{ ready?: boolean; port: number }>((l) => l.ready === true, "s3rver"))
    .port;
}

/**
 * An HTTP proxy to s3rver on `port`. While `cut` is above 0, the next PUT of
 * a WAL segment that s3rver answers 200 has its object file (under `dir`)
 * cut to half its length before the answer goes on; its key is recorded.
 */
async function cuttingProxy(port: number, dir: string) {
  const state = { cut: 0, cutKeys: [] as string[] };
  const server = createServer((req, res) => {
    const up = request(
      { host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const body: Buffer[] = [];
        answer.on("data", (c: Buffer) => body.push(c));
        answer.on("end", async () => {
          const path = new URL(req.url ?? "/", "http://x").pathname;
          if (
            req.method === "PUT" &&
            answer.statusCode === 200 &&
            path.includes("/wal/") &&
            state.cut > 0
          ) {
            state.cut--;
            const file = `${join(dir, ...path.split("/").map(decodeURIComponent))}._S3rver_object`;
            const sent = Number(
              req.headers["x-amz-decoded-content-length"] ?? req.headers["content-length"],
            );
            // s3rver may still be writing what it acknowledged: wait for all of it, then cut.
            await until(
              "s3rver wrote the object",
              () => (statSync(file, { throwIfNoEntry: false })?.size ?? 0) >= sent,
              10_000,
            );
            truncateSync(file, Math.floor(sent / 2));
            state.cutKeys.push(path.split("/").slice(3).join("/")); // less "/hearth/replicas/"
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(body));
        });
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { state, port: (server.address() as AddressInfo).port };
}

async function append(store: Store, sessionId: string, prefix: string, n: number) {
  for (let i = 0; i < n; i++)
    await store.messages.append(sessionId, {
      role: "user",
      content: `${prefix}${i} ${"h".repeat(300)}`,
    });
}

async function restore(store: Store, home: string) {
  const target = await openTarget(targetConfig(store.config, "offsite"), home);
  const into = join(mkdtempSync(join(tmpdir(), "hearth-half-")), "home");
  return restoreIntoNewHome(target, "default", undefined, into, store.config);
}

describe("a segment that lands half-written", () => {
  it("on S3 (real s3rver): the shipper does not count it, removes it and sends it again; the restore equals the store", async () => {
    const bucket = mkdtempSync(join(tmpdir(), "hearth-s3-"));
    const proxy = await cuttingProxy(await startS3rver(bucket), bucket);
    const home = tempHome();
    const store = await openStore({
      home,
      config: {
        ...replicaConfig("/unused", { snapshotIntervalMs: 600_000 }),
        backup: s3Targets(proxy.port),
        durability: { walAutocheckpointPages: 100_000 },
      },
    });
    const session = await store.sessions.create({ title: "half" });
    await append(store, session.id, "a", 20);
    const replication = await replicating(store, home);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();

    // s3rver acknowledges the next segment; half of it is on its disk.
    proxy.state.cut = 1;
    await append(store, session.id, "b", 10);
    await replication.tick();
    expect(proxy.state.cutKeys).toHaveLength(1);
    expect(replication.statuses()[0]!.lastError).toMatchObject({
      code: "HEARTH_TARGET_FAILED",
      message: expect.stringContaining("acknowledged"),
    });
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    // Removed, not left for a restore to trip on.
    const keys = (await listReplica(target, "default")).segments.map((s) => s.key);
    expect(keys).not.toContain(proxy.state.cutKeys[0]);

    // The next tick sends those frames again, with the ones committed since.
    await append(store, session.id, "c", 10);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();
    await replication.stop();
    const expected = rows(store.path);
    expect(expected).toHaveLength(40);
    const restored = await restore(store, home);
    expect(rows(restored.path)).toEqual(expected);
    expect(restored.skipped).toEqual([]);
    await store.close();
  });
});

describe("a restore meeting a segment that does not match its checksum", () => {
  /** A replica of 30 rows in two segments; `twin` adds a copy of the last one under another name. */
  async function replica() {
    const dir = mkdtempSync(join(tmpdir(), "hearth-target-"));
    const home = tempHome();
    const store = await openStore({
      home,
      config: { ...replicaConfig(dir), durability: { walAutocheckpointPages: 100_000 } },
    });
    const session = await store.sessions.create({ title: "twins" });
    await append(store, session.id, "a", 20);
    const replication = await replicating(store, home);
    await replication.tick();
    await append(store, session.id, "b", 10);
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();
    await replication.stop();
    const target = await openTarget(targetConfig(store.config, "offsite"), home);
    const last = (await listReplica(target, "default")).segments.at(-1)!;
    const file = (key: string) => join(dir, ...key.split("/"));
    /** The last segment's bytes again, from the same frame, sent 1 ms later, reaching `to`. */
    const twin = (to: number) => {
      const key = segmentKey("default", { ...last, to, at: last.at + 1 });
      writeFileSync(file(key), readFileSync(file(last.key)));
      return key;
    };
    /** An object cut to half its length, its name kept (what s3rver left). */
    const half = (key: string) => truncateSync(file(key), Math.floor(statSync(file(key)).size / 2));
    return { store, home, last, twin, half };
  }

  it("skips a half-written twin when an intact one reaches as far, and says so", async () => {
    const { store, home, last, twin, half } = await replica();
    twin(last.to); // the same frames, sent again
    half(last.key); // the earlier one, which a restore would otherwise take
    const restored = await restore(store, home);
    expect(rows(restored.path)).toEqual(rows(store.path));
    expect(rows(restored.path)).toHaveLength(30);
    expect(restored.skipped).toEqual([last.key]);
    await store.close();
  });

  it("refuses (HEARTH_REPLICA_CORRUPT) when the half-written one reaches further than any intact twin", async () => {
    const { store, home, last, twin, half } = await replica();
    const further = twin(last.to + 5);
    half(further);
    await expect(restore(store, home)).rejects.toMatchObject({
      code: "HEARTH_REPLICA_CORRUPT",
      message: expect.stringContaining(further),
    });
    await store.close();
  });
});
