// The short-lived writers of a torture run: store workers that open the
// store, append (each acknowledged message to the ledger), maybe open and
// close the files inside themselves or run DDL, and exit.
import { Proc } from "./proc.mjs";
import { START_MS, WORKER } from "./spawn.mjs";

/** A short-lived writer: opens the store, writes `count` messages (each acknowledged one to the ledger), exits. */
export async function runWorker(a, count, { strayInside = false, ddl = false, failpoint } = {}) {
  const n = a.workerSeq++;
  const env = { HEARTH_PROCESS_KIND: "worker", HEARTH_FAILPOINTS: failpoint ?? "" };
  const proc = new Proc([WORKER], { env, name: "worker" });
  const armed = failpoint?.split("=")[0];
  if (armed) a.stats.failpoints[armed].armed++;
  a.workers.add(proc);
  a.stats.workers.started++;
  let id = 0;
  const call = async (op, args = {}) => {
    const mine = ++id;
    const reply = proc.json((m) => m.id === mine, 60_000, `reply to ${op}`);
    proc.send({ id: mine, op, ...args });
    const r = await reply;
    if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code, op });
    return r.result;
  };
  try {
    await proc.json((m) => m.ready === true, START_MS, "ready");
    await call("open", { home: a.home });
    const session = await call("create", { title: `worker ${n}` });
    for (let i = 0; i < count; i++) {
      const clientId = `w${n}-${i}`;
      await call("append", { sessionId: session.id, content: `message ${clientId}`, clientId });
      a.ledger.ack(clientId, session.id, "worker");
      if (strayInside && i === Math.floor(count / 2)) {
        // Third-party code in a live holder opens and closes the database and its
        // sidecars: with plain POSIX locks that drops every lock the process holds.
        await call("stray", { paths: ["", "-wal", "-shm"].map((x) => a.db + x) });
        a.stats.strayInside++;
      }
    }
    if (ddl) await workerDdl(a, call, proc);
    await call("close");
    a.stats.workers.finished++;
  } catch (err) {
    if (err.code) {
      // Refused clearly (a window or a stopped holder): not a loss, nothing acknowledged.
      a.stats.workers.refused++;
      const key = `worker ${err.op} ${err.code}`;
      a.stats.cli[key] = (a.stats.cli[key] ?? 0) + 1;
    }
    // Otherwise it was killed: the checks after the kill judge what it acknowledged.
  } finally {
    proc.signal("SIGTERM");
    const { signal } = await proc.exited;
    a.workers.delete(proc);
    if (armed && signal === "SIGKILL" && proc.child.killed === false) {
      a.stats.failpoints[armed].fired++;
      await a.checks.run(`after ${failpoint} in a worker`);
    }
  }
}

/**
 * DDL from a short-lived worker (ANALYZE and an FTS merge under the
 * structural gate): it runs only when no other writer lives, else it is
 * refused with HEARTH_STORE_HELD naming each holder (pid N).
 */
async function workerDdl(a, call, proc) {
  a.stats.ddl.tried++;
  try {
    await call("ddl");
    a.stats.ddl.ran++;
  } catch (err) {
    if (err.code === "HEARTH_STORE_HELD" || err.code === "HEARTH_HOLDERS_UNKNOWN") {
      a.stats.ddl.refused++;
      if (!/pid \d+/.test(err.message))
        a.stats.badRefusals.push(`worker ${proc.pid} ddl refused naming no holder: ${err.message}`);
      return;
    }
    throw err;
  }
}
