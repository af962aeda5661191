/**
 * The replication thread: packs WAL segments (segment.ts: read, checksum,
 * keep each page's last version, deflate, SHA-256) off the event loop of
 * the process that writes the store, which in the gateway is also the
 * writer's. It opens no database and writes nothing: it reads the WAL file
 * and hands the packed bytes back.
 */
import { parentPort } from "node:worker_threads";
import { packSegment } from "./segment.js";
import type { PackJob, PackReply } from "./shipper.js";

parentPort!.on("message", (job: PackJob) => {
  let reply: PackReply;
  try {
    const packed = packSegment(job.walPath, job.header, job.from, job.maxBytes);
    reply = { id: job.id, ok: true, packed };
    const { buffer, byteOffset, byteLength } = packed.data;
    // The bytes move to the caller, not copied (deflate's output owns its buffer).
    if (
      byteOffset === 0 &&
      byteLength === buffer.byteLength &&
      !(buffer instanceof SharedArrayBuffer)
    )
      parentPort!.postMessage(reply, [buffer as ArrayBuffer]);
    else parentPort!.postMessage(reply);
    return;
  } catch (err) {
    reply = { id: job.id, ok: false, message: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
