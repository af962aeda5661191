// Loaded into a gateway or dashboard of a torture run with
// NODE_OPTIONS=--import: third-party code inside a live holder, as in the
// field report (a library that opens and closes its own handle on state.db
// and its sidecars). With plain POSIX locks such a close drops every lock
// the process holds (F2); hearth's OFD locks must make it harmless.
//
// The runner asks by writing <TORTURE_STRAY_DIR>/<pid>.req (a JSON list of
// paths); this process opens and closes each, then writes <pid>.done with
// how many it opened, so the runner counts only strays that happened.
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

const dir = process.env.TORTURE_STRAY_DIR;
if (dir && isMainThread) {
  const req = `${dir}/${process.pid}.req`;
  setInterval(() => {
    let paths;
    try {
      paths = JSON.parse(readFileSync(req, "utf8"));
    } catch {
      return; // nothing asked (or half written: next tick)
    }
    rmSync(req, { force: true });
    let opened = 0;
    for (const p of paths) {
      try {
        closeSync(openSync(p, "r"));
        opened++;
      } catch {
        // a sidecar between generations
      }
    }
    writeFileSync(`${dir}/${process.pid}.tmp`, String(opened));
    renameSync(`${dir}/${process.pid}.tmp`, `${dir}/${process.pid}.done`);
  }, 100).unref();
}
