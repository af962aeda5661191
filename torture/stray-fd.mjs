// A stray process that opens and closes descriptors on the database and its
// sidecars from outside, as backup agents, indexers and antivirus scanners
// do. POSIX locks belong to (process, inode): a close here cannot drop the
// locks of another process, so this must always be harmless. The dangerous
// case (a stray close inside a holder) is covered by
// test/integration/files/stray-close.test.ts, not here.
//
//   node torture/stray-fd.mjs <state.db> <rounds>
import { closeSync, openSync } from "node:fs";

const [path, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 10);
let opened = 0;
let missing = 0;
for (let i = 0; i < rounds; i++) {
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      closeSync(openSync(path + suffix, "r"));
      opened++;
    } catch {
      missing++; // a sidecar between generations: nothing to open
    }
  }
}
process.stdout.write(`${JSON.stringify({ opened, missing })}\n`);
